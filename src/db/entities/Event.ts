// The transactional outbox of live events (CONTRACT §4.8): one row per committed change, numbered in commit order.
import { defineEntity, p } from '@mikro-orm/core';

export const EventSchema = defineEntity({
  name: 'Event',
  tableName: 'events',
  properties: {
    // Inserted with a negative placeholder; the commit-time trigger of the migration replaces it with the next
    // number from `events_id_seq` while holding a lock until the commit ends, so ids follow commit order
    // (docs/events.md). The placeholder is never visible to another transaction.
    id: p.bigint('number').primary().autoincrement(false).defaultRaw(`(- nextval('events_pending_id_seq'::regclass))`),
    type: p.string().length(64),
    channel: p.string().length(32),
    occurredAt: p.datetime(3),
    /** Username of whoever made the change; null for the system (e.g. the expiry sweep). */
    actor: p.string().length(128).nullable(),
    /** Set for events only one user may receive (`session.revoked`). */
    audienceUserId: p.uuid().nullable(),
    data: p.json<Record<string, unknown>>().columnType('jsonb'),
  },
  // A deferred constraint trigger (numbering at commit), which only raw DDL can declare; its function is
  // created by the migration under the name MikroORM gives trigger functions, so dropping the trigger drops it too.
  triggers: [
    {
      name: 'events_number_at_commit',
      timing: 'after',
      events: ['insert'],
      expression: `create constraint trigger "events_number_at_commit" after insert on "events" deferrable initially deferred for each row execute function "events_events_number_at_commit_fn"()`,
    },
  ],
});
export class Event extends EventSchema.class {}
EventSchema.setClass(Event);
