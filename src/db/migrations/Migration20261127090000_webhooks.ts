// Outbound webhooks (CONTRACT §4.12): the webhooks, and their deliveries with the body each attempt sends.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127090000_webhooks extends Migration {

  override name = 'Migration20261127090000_webhooks';

  override up(): void {
    this.addSql(`create table "webhooks" ("id" uuid not null, "url" varchar(2048) not null, "event_types" text[] not null, "description" varchar(500) null, "enabled" boolean not null, "disabled_reason" varchar(64) null, "consecutive_failures" int not null, "secret" varchar(64) not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "created_by" varchar(128) not null, primary key ("id"));`);
    this.addSql(`create index "webhooks_created_at_id_idx" on "webhooks" ("created_at" desc, "id" desc);`);

    this.addSql(`create table "webhook_deliveries" ("id" uuid not null, "webhook_id" uuid not null, "event_row_id" bigint null, "event_id" varchar(64) null, "event_type" varchar(64) not null, "body" text null, "status" varchar(16) not null, "attempts" int not null, "last_attempt_at" timestamptz(3) null, "next_attempt_at" timestamptz(3) null, "response_status" int null, "error" varchar(64) null, "created_at" timestamptz(3) not null, "succeeded_at" timestamptz(3) null, "attempt_job_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_webhook_created_at_id_idx" on "webhook_deliveries" ("webhook_id", "created_at" desc, "id" desc);`);
    this.addSql(`create index "webhook_deliveries_created_at_idx" on "webhook_deliveries" ("created_at");`);
    this.addSql(`create index "webhook_deliveries_unread_event_idx" on "webhook_deliveries" ("event_row_id") where "body" is null;`);

    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_status_check" check (status in ('pending', 'succeeded', 'failed'));`);
  }

  override down(): void {
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
    this.addSql(`drop table if exists "webhooks" cascade;`);
  }

}
