import { Migration } from '@mikro-orm/migrations';

export class Migration20261123193654_idempotency_keys extends Migration {

  override name = 'Migration20261123193654_idempotency_keys';

  override up(): void | Promise<void> {
    this.addSql(`create table "idempotency_keys" ("user_id" uuid not null, "key" varchar(255) not null, "operation" varchar(64) not null, "fingerprint" varchar(64) not null, "response" jsonb null, "created_at" timestamptz(3) not null, "lease_until" timestamptz(3) not null, "expires_at" timestamptz(3) not null, primary key ("user_id", "key"));`);
    this.addSql(`create index "idempotency_keys_expires_at_idx" on "idempotency_keys" ("expires_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "idempotency_keys" cascade;`);
  }

}
