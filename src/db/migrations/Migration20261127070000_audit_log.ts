// The audit log (CONTRACT §4.13): entries with an index per filter, each in the list's order; rows are never updated.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127070000_audit_log extends Migration {

  override name = 'Migration20261127070000_audit_log';

  override up(): void {
    this.addSql(`create table "audit_entries" ("id" bigserial primary key, "occurred_at" timestamptz(3) not null, "type" varchar(64) not null, "category" varchar(64) not null, "actor" varchar(128) null, "actor_type" varchar(16) not null, "api_key_id" uuid null, "ip_address" text null, "request_id" varchar(128) null, "target_type" varchar(32) null, "target_id" varchar(128) null, "data" jsonb not null);`);
    this.addSql(`create index "audit_entries_occurred_at_id_idx" on "audit_entries" ("occurred_at" desc, "id" desc);`);
    this.addSql(`create index "audit_entries_type_idx" on "audit_entries" ("type", "occurred_at" desc, "id" desc);`);
    this.addSql(`create index "audit_entries_category_idx" on "audit_entries" ("category", "occurred_at" desc, "id" desc);`);
    this.addSql(`create index "audit_entries_actor_idx" on "audit_entries" ("actor", "occurred_at" desc, "id" desc) where "actor" is not null;`);
    this.addSql(`create index "audit_entries_target_idx" on "audit_entries" ("target_id", "occurred_at" desc, "id" desc) where "target_id" is not null;`);

    this.addSql(`alter table "audit_entries" add constraint "audit_entries_actor_type_check" check (actor_type in ('user', 'api_key', 'system', 'admin'));`);
    this.addSql(`alter table "audit_entries" add constraint "audit_entries_category_check" check (category = split_part(type, '.', 1));`);

    // Append-only in the database too (the entity's trigger): only retention removes entries, nothing changes one.
    this.addSql(`create or replace function "audit_entries_audit_entries_append_only_fn"() returns trigger as $$ begin raise exception 'audit entries are never changed'; end; $$ language plpgsql;`);
    this.addSql(`create trigger "audit_entries_append_only" BEFORE UPDATE on "audit_entries" for each ROW execute function "audit_entries_audit_entries_append_only_fn"();`);
  }

  override down(): void {
    this.addSql(`drop table if exists "audit_entries" cascade;`);
    this.addSql(`drop function if exists "audit_entries_audit_entries_append_only_fn"();`);
  }

}
