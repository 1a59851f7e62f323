// The event outbox (generated from the entities) plus what no entity can say: the two sequences and the
// commit-time trigger that numbers events in commit order and wakes every instance's listener (docs/events.md).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261123193524_event_outbox extends Migration {

  override name = 'Migration20261123193524_event_outbox';

  override up(): void | Promise<void> {
    // The public ids, and the placeholders rows carry until their transaction commits.
    this.addSql(`create sequence "events_id_seq" as bigint;`);
    this.addSql(`create sequence "events_pending_id_seq" as bigint;`);

    this.addSql(`create table "events" ("id" bigint not null default (- nextval('events_pending_id_seq'::regclass)), "type" varchar(64) not null, "channel" varchar(32) not null, "occurred_at" timestamptz(3) not null, "actor" varchar(128) null, "audience_user_id" uuid null, "data" jsonb not null, primary key ("id"));`);

    this.addSql(`create table "event_retention" ("id" smallint not null, "purged_through" bigint not null default '0', primary key ("id"));`);

    this.addSql(`create table "event_streams" ("id" uuid not null, "user_id" uuid not null, "session_id" varchar(64) not null, "instance_id" uuid not null, "opened_at" timestamptz(3) not null, "seen_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "event_streams_user_id_idx" on "event_streams" ("user_id");`);
    this.addSql(`create index "event_streams_instance_id_idx" on "event_streams" ("instance_id");`);

    this.addSql(`alter table "event_retention" add constraint "event_retention_single_row" check (id = 1);`);
    this.addSql(`insert into "event_retention" ("id", "purged_through") values (1, 0);`);

    // Runs at COMMIT (deferred), once per event row. The transaction-level advisory lock is released only
    // after the commit is visible, so the next transaction takes its numbers after this one is visible:
    // ids increase in commit order, and "events after N" never skips one that committed late. The
    // notification is delivered at commit, and only if the transaction commits (identical ones collapse).
    this.addSql(`create function "events_events_number_at_commit_fn"() returns trigger language plpgsql as $$
begin
  perform pg_advisory_xact_lock(8326712098451934427);
  update "events" set "id" = nextval('events_id_seq') where "id" = new."id";
  perform pg_notify('agent_org_events', '');
  return null;
end
$$;`);
    this.addSql(`create constraint trigger "events_number_at_commit" after insert on "events" deferrable initially deferred for each row execute function "events_events_number_at_commit_fn"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "events" cascade;`);
    this.addSql(`drop function if exists "events_events_number_at_commit_fn"();`);
    this.addSql(`drop table if exists "event_retention" cascade;`);
    this.addSql(`drop table if exists "event_streams" cascade;`);
    this.addSql(`drop sequence if exists "events_id_seq";`);
    this.addSql(`drop sequence if exists "events_pending_id_seq";`);
  }

}
