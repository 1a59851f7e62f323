// Two-factor authentication (CONTRACT §3.6): whether a user has it on, their TOTP key and recovery codes.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127080000_mfa extends Migration {

  override name = 'Migration20261127080000_mfa';

  override up(): void {
    this.addSql(`create table "user_totp" ("user_id" uuid not null, "secret" text not null, "created_at" timestamptz(3) not null, "last_used_step" int null, primary key ("user_id"));`);
    this.addSql(`create table "mfa_recovery_codes" ("user_id" uuid not null, "code_hash" varchar(64) not null, "created_at" timestamptz(3) not null, primary key ("user_id", "code_hash"));`);
    // Every existing user signs in as before: nobody has two-factor authentication yet.
    this.addSql(`alter table "users" add column "mfa_enabled" boolean not null default false;`);
  }

  override down(): void {
    this.addSql(`drop table if exists "user_totp" cascade;`);
    this.addSql(`drop table if exists "mfa_recovery_codes" cascade;`);
    this.addSql(`alter table "users" drop column "mfa_enabled";`);
  }

}
