// The queue-depth metric counts pending webhook deliveries at every scrape: a partial index of those alone.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127091000_webhook_pending_index extends Migration {

  override name = 'Migration20261127091000_webhook_pending_index';

  override up(): void {
    this.addSql(`create index "webhook_deliveries_pending_idx" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending';`);
  }

  override down(): void {
    this.addSql(`drop index if exists "webhook_deliveries_pending_idx";`);
  }

}
