import { Migration } from '@mikro-orm/migrations';

export class Migration20261121132802_setup extends Migration {

  override name = 'Migration20261121132802_setup';

  override up(): void | Promise<void> {
    this.addSql(`create table "setup_agents" ("agent_index" int not null, "name" varchar(200) not null, "role" varchar(100) not null, "department" varchar(100) not null, "level" varchar(16) not null, "personality_preset" varchar(64) not null, "model_provider" varchar(64) not null, "model_id" varchar(128) not null, "tier" varchar(16) not null, "budget_limit_monthly" double precision null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("agent_index"));`);

    this.addSql(`create table "setup_state" ("id" smallint not null, "company_name" varchar(200) null, "company_description" varchar(1000) null, "template_name" varchar(64) null, "name_locales" text[] null, "completed_at" timestamptz(3) null, "updated_at" timestamptz(3) null, primary key ("id"));`);

    this.addSql(`alter table "setup_agents" add constraint "setup_agents_index_check" check (agent_index >= 0 and agent_index < 100);`);
    this.addSql(`alter table "setup_agents" add constraint "setup_agents_level_check" check (level in ('junior', 'mid', 'senior', 'lead', 'principal', 'director', 'vp', 'c_suite'));`);
    this.addSql(`alter table "setup_agents" add constraint "setup_agents_tier_check" check (tier in ('large', 'medium', 'small'));`);

    this.addSql(`alter table "setup_state" add constraint "setup_state_singleton" check (id = 1);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "setup_agents" cascade;`);
    this.addSql(`drop table if exists "setup_state" cascade;`);
  }

}
