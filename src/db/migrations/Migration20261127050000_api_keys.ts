// Service accounts and API keys (CONTRACT §3.5): users get a kind (every existing one is human), keys a table,
// and tickets and event streams may act as a key instead of a session.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127050000_api_keys extends Migration {

  override name = 'Migration20261127050000_api_keys';

  override up(): void {
    this.addSql(`create table "api_keys" ("id" uuid not null, "secret_hash" varchar(64) not null, "user_id" uuid not null, "name" varchar(100) not null, "prefix" varchar(12) not null, "scopes" text[] not null, "created_at" timestamptz(3) not null, "created_by" varchar(128) not null, "expires_at" timestamptz(3) null, "last_used_at" timestamptz(3) null, "revoked_at" timestamptz(3) null, primary key ("id"));`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_secret_hash_unique" unique ("secret_hash");`);
    this.addSql(`create index "api_keys_created_at_id_idx" on "api_keys" ("created_at" desc, "id" desc);`);
    this.addSql(`create index "api_keys_user_created_at_id_idx" on "api_keys" ("user_id", "created_at" desc, "id" desc);`);

    this.addSql(`alter table "event_streams" add "api_key_id" uuid null;`);
    this.addSql(`alter table "event_streams" alter column "session_id" drop not null;`);
    this.addSql(`alter table "event_streams" add constraint "event_streams_holder_check" check (num_nonnulls(session_id, api_key_id) = 1);`);

    // The default makes every existing user a person, who has a password: both checks hold for them.
    this.addSql(`alter table "users" add "kind" varchar(16) not null default 'human';`);
    this.addSql(`alter table "users" alter column "password_hash" drop not null;`);
    this.addSql(`alter table "users" add constraint "users_kind_check" check (kind in ('human', 'service'));`);
    this.addSql(`alter table "users" add constraint "users_kind_password_check" check ((kind = 'service') = (password_hash is null));`);

    this.addSql(`alter table "ws_tickets" add "api_key_id" uuid null;`);
    this.addSql(`alter table "ws_tickets" alter column "session_id" drop not null;`);
    this.addSql(`alter table "ws_tickets" add constraint "ws_tickets_holder_check" check (num_nonnulls(session_id, api_key_id) = 1);`);
  }

  override down(): void {
    this.addSql(`drop table if exists "api_keys" cascade;`);

    // Tickets and streams of keys have no session to fall back to.
    this.addSql(`delete from "event_streams" where "session_id" is null;`);
    this.addSql(`alter table "event_streams" drop constraint "event_streams_holder_check";`);
    this.addSql(`alter table "event_streams" drop column "api_key_id";`);
    this.addSql(`alter table "event_streams" alter column "session_id" set not null;`);

    // Service accounts cannot exist without a password column value.
    this.addSql(`delete from "user_org_roles" where "user_id" in (select "id" from "users" where "kind" = 'service');`);
    this.addSql(`delete from "users" where "kind" = 'service';`);
    this.addSql(`alter table "users" drop constraint "users_kind_check";`);
    this.addSql(`alter table "users" drop constraint "users_kind_password_check";`);
    this.addSql(`alter table "users" drop column "kind";`);
    this.addSql(`alter table "users" alter column "password_hash" set not null;`);

    this.addSql(`delete from "ws_tickets" where "session_id" is null;`);
    this.addSql(`alter table "ws_tickets" drop constraint "ws_tickets_holder_check";`);
    this.addSql(`alter table "ws_tickets" drop column "api_key_id";`);
    this.addSql(`alter table "ws_tickets" alter column "session_id" set not null;`);
  }

}
