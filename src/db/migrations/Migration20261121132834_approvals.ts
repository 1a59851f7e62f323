import { Migration } from '@mikro-orm/migrations';

export class Migration20261121132834_approvals extends Migration {

  override name = 'Migration20261121132834_approvals';

  override up(): void | Promise<void> {
    this.addSql(`create table "approvals" ("id" uuid not null, "action_type" varchar(128) not null, "title" varchar(256) not null, "description" text not null, "requested_by_id" uuid not null, "requested_by" varchar(128) not null, "risk_level" varchar(16) not null, "status" varchar(16) not null, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) null, "decided_at" timestamptz(3) null, "decided_by_id" uuid null, "decided_by" varchar(128) null, "decision_reason" text null, "task_id" varchar(128) null, "metadata" jsonb not null default '{}', primary key ("id"));`);
    this.addSql(`create index "approvals_status_created_at_id_idx" on "approvals" ("status", "created_at" desc, "id" desc);`);
    this.addSql(`create index "approvals_created_at_id_idx" on "approvals" ("created_at" desc, "id" desc);`);
    this.addSql(`create index "approvals_pending_expires_at_idx" on "approvals" ("expires_at") where "status" = 'pending' and "expires_at" is not null;`);

    this.addSql(`create table "stage_decisions" ("id" bigserial primary key, "task_id" varchar(128) not null, "stage_name" varchar(128) not null, "verdict" varchar(8) not null, "reason" text null, "decided_by_id" uuid not null, "decided_by" varchar(128) not null, "decided_at" timestamptz(3) not null);`);
    this.addSql(`alter table "stage_decisions" add constraint "stage_decisions_task_stage_unique" unique ("task_id", "stage_name");`);

    this.addSql(`alter table "approvals" add constraint "approvals_status_check" check (status in ('pending', 'approved', 'rejected', 'expired'));`);
    this.addSql(`alter table "approvals" add constraint "approvals_risk_level_check" check (risk_level in ('low', 'medium', 'high', 'critical'));`);

    this.addSql(`alter table "stage_decisions" add constraint "stage_decisions_verdict_check" check (verdict in ('pass', 'fail', 'skip'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "approvals" cascade;`);
    this.addSql(`drop table if exists "stage_decisions" cascade;`);
  }

}
