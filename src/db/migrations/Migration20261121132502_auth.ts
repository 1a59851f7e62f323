import { Migration } from '@mikro-orm/migrations';

export class Migration20261121132502_auth extends Migration {

  override name = 'Migration20261121132502_auth';

  override up(): void | Promise<void> {
    this.addSql(`create table "refresh_tokens" ("token_hash" varchar(64) not null, "session_id" varchar(64) not null, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, "used_at" timestamptz(3) null, primary key ("token_hash"));`);
    this.addSql(`create index "refresh_tokens_session_id_idx" on "refresh_tokens" ("session_id");`);

    this.addSql(`create table "sessions" ("id" varchar(64) not null, "token_hash" varchar(64) not null, "user_id" uuid not null, "ip_address" varchar(64) null, "user_agent" varchar(512) null, "created_at" timestamptz(3) not null, "last_active_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, "refresh_expires_at" timestamptz(3) not null, "absolute_expires_at" timestamptz(3) not null, "revoked_at" timestamptz(3) null, "revoked_reason" varchar(32) null, primary key ("id"));`);
    this.addSql(`alter table "sessions" add constraint "sessions_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "sessions_user_id_idx" on "sessions" ("user_id");`);

    this.addSql(`create table "users" ("id" uuid not null, "username" varchar(128) not null, "username_key" varchar(128) not null, "password_hash" text not null, "role" varchar(32) not null, "must_change_password" boolean not null default false, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "users" add constraint "users_username_key_unique" unique ("username_key");`);
    this.addSql(`create index "users_created_at_id_idx" on "users" ("created_at", "id");`);
    this.addSql(`create unique index "users_one_ceo" on "users" ("role") where "role" = 'ceo';`);

    this.addSql(`create table "user_org_roles" ("user_id" uuid not null, "role" varchar(32) not null, "scoped_departments" text[] not null default '{}', "created_at" timestamptz(3) not null, primary key ("user_id", "role"));`);
    this.addSql(`create index "user_org_roles_role_idx" on "user_org_roles" ("role");`);

    this.addSql(`create table "ws_tickets" ("ticket_hash" varchar(64) not null, "user_id" uuid not null, "session_id" varchar(64) not null, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, "redeemed_at" timestamptz(3) null, primary key ("ticket_hash"));`);
    this.addSql(`create index "ws_tickets_user_id_idx" on "ws_tickets" ("user_id");`);

    this.addSql(`alter table "users" add constraint "users_role_check" check (role in ('ceo', 'manager', 'board_member', 'pair_programmer', 'observer'));`);

    this.addSql(`alter table "user_org_roles" add constraint "user_org_roles_role_check" check (role in ('owner', 'department_admin', 'editor', 'viewer'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "refresh_tokens" cascade;`);
    this.addSql(`drop table if exists "sessions" cascade;`);
    this.addSql(`drop table if exists "users" cascade;`);
    this.addSql(`drop table if exists "user_org_roles" cascade;`);
    this.addSql(`drop table if exists "ws_tickets" cascade;`);
  }

}
