// The transactional outbox of live events (CONTRACT §4.8): one row per committed change, numbered when it is published.
import { defineEntity, p, Routine } from '@mikro-orm/core';

export const EventSchema = defineEntity({
  name: 'Event',
  tableName: 'events',
  properties: {
    /** Insertion order: a row's place among the events recorded before it. Never shown to clients. */
    rowId: p.bigint('number').primary().autoincrement(),
    /**
     * The public id, null until the row is published: publication (the migration's `events_publish`) numbers
     * committed rows under a lock held until it commits, so ids become visible in increasing order and
     * "events after N" never skips one whose transaction committed late (docs/events.md).
     */
    id: p.bigint('number').nullable().unique('events_id_unique'),
    type: p.string().length(64),
    channel: p.string().length(32),
    occurredAt: p.datetime(3),
    /** Username of whoever made the change; null for the system (e.g. the expiry sweep). */
    actor: p.string().length(128).nullable(),
    /** Set for events only one user may receive (`session.revoked`). */
    audienceUserId: p.uuid().nullable(),
    data: p.json<Record<string, unknown>>().columnType('jsonb'),
  },
  indexes: [
    // The publisher only ever looks for rows still waiting for their id.
    {
      name: 'events_unpublished_idx',
      expression: `create index "events_unpublished_idx" on "events" ("row_id") where "id" is null`,
    },
  ],
});
export class Event extends EventSchema.class {}
EventSchema.setClass(Event);

/**
 * Publishes up to `batch` committed events that have no id yet, oldest recorded first, and returns how many.
 * The transaction-level lock makes publications one at a time on every instance, each holding it until its
 * commit is visible: a later publication takes larger ids and becomes visible after the earlier one, so a
 * reader of "events after N" never misses an id below one it has seen. Writers take no lock and notify
 * nobody, so their commits are not serialized. The notification, sent at commit, wakes every instance; its
 * payload is the highest id published, so an instance that has already read that far skips the read.
 * Raw DDL: PL/pgSQL with a DECLARE block, which the routine body builder cannot write.
 */
export const EventsPublish = new Routine({
  name: 'events_publish',
  type: 'function',
  language: 'plpgsql',
  params: { batch: { type: 'integer', runtimeType: 'number' } },
  returns: { runtimeType: 'number', columnType: 'integer' },
  expression: `create function "events_publish"("batch" integer) returns integer language plpgsql as $$
declare
  published integer;
  last_id bigint;
begin
  perform pg_advisory_xact_lock(8326712098451934427);
  with picked as (
    select "row_id" from "events" where "id" is null order by "row_id" limit "batch"
  ), numbered as (
    select "row_id", nextval('events_id_seq') as "id" from picked
  ), updated as (
    update "events" set "id" = numbered."id" from numbered where "events"."row_id" = numbered."row_id" returning "events"."id"
  )
  select count(*), max("id") into published, last_id from updated;
  if published > 0 then
    perform pg_notify('agent_org_events', last_id::text);
  end if;
  return published;
end
$$`,
});
