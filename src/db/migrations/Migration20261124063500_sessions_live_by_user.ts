// A partial index of each user's live sessions: eviction under the cap no longer reads every revoked session the user still has.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261124063500_sessions_live_by_user extends Migration {

  override name = 'Migration20261124063500_sessions_live_by_user';

  override up(): void {
    this.addSql(`create index "sessions_live_by_user_idx" on "sessions" ("user_id", "created_at" desc, "id" desc) where "revoked_at" is null;`);
  }

  override down(): void {
    this.addSql(`drop index "sessions_live_by_user_idx";`);
  }

}
