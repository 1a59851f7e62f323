// Approval waits in flight (CONTRACT §4.11): one row per held GET /approvals/{id}?wait_s=N, counted per user on every instance.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127060000_approval_waits extends Migration {

  override name = 'Migration20261127060000_approval_waits';

  override up(): void {
    this.addSql(`create table "approval_waits" ("id" uuid not null, "user_id" uuid not null, "approval_id" uuid not null, "held_until" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "approval_waits_user_id_idx" on "approval_waits" ("user_id");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "approval_waits" cascade;`);
  }

}
