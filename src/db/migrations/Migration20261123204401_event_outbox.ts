// The event outbox, its retention mark, the open-stream registry and events_publish() (generated from the
// entities and the EventsPublish routine), plus by hand: the public id sequence and the retention row.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261123204401_event_outbox extends Migration {

  override name = 'Migration20261123204401_event_outbox';

  override up(): void | Promise<void> {
    // Public event ids, taken only by events_publish (the row_id serial is the insertion order).
    this.addSql(`create sequence "events_id_seq" as bigint;`);
    this.addSql(`create table "events" ("row_id" bigserial primary key, "id" bigint null, "type" varchar(64) not null, "channel" varchar(32) not null, "occurred_at" timestamptz(3) not null, "actor" varchar(128) null, "audience_user_id" uuid null, "data" jsonb not null);`);
    this.addSql(`alter table "events" add constraint "events_id_unique" unique ("id");`);
    this.addSql(`create index "events_unpublished_idx" on "events" ("row_id") where "id" is null;`);

    this.addSql(`create table "event_retention" ("id" smallint not null, "purged_through" bigint not null default '0', primary key ("id"));`);

    this.addSql(`create table "event_streams" ("id" uuid not null, "user_id" uuid not null, "session_id" varchar(64) not null, "instance_id" uuid not null, "opened_at" timestamptz(3) not null, "seen_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "event_streams_user_id_idx" on "event_streams" ("user_id");`);
    this.addSql(`create index "event_streams_instance_id_idx" on "event_streams" ("instance_id");`);

    this.addSql(`alter table "event_retention" add constraint "event_retention_single_row" check (id = 1);`);
    this.addSql(`insert into "event_retention" ("id", "purged_through") values (1, 0);`);

    this.addSql(`create function "events_publish"("batch" integer) returns integer language plpgsql as $$declare
  published integer; begin
  perform pg_advisory_xact_lock(8326712098451934427);   with picked as (
    select "row_id" from "events" where "id" is null order by "row_id" limit "batch"
  ), numbered as (
    select "row_id", nextval('events_id_seq') as "id" from picked
  )
  update "events" set "id" = numbered."id" from numbered where "events"."row_id" = numbered."row_id";   get diagnostics published = row_count;   if published > 0 then
    perform pg_notify('agent_org_events', '');   end if;   return published; end$$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "events" cascade;`);
    this.addSql(`drop table if exists "event_retention" cascade;`);
    this.addSql(`drop table if exists "event_streams" cascade;`);

    this.addSql(`drop function if exists "events_publish"(integer);`);
    this.addSql(`drop sequence if exists "events_id_seq";`);
  }

}
