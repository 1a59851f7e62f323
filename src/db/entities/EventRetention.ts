// The one row saying up to which event id the outbox has been purged, so a too-old `since` is refused, not skipped.
import { defineEntity, p } from '@mikro-orm/core';

export const EventRetentionSchema = defineEntity({
  name: 'EventRetention',
  tableName: 'event_retention',
  properties: {
    id: p.smallint().primary().autoincrement(false),
    /** Every event with an id at or below this one may be gone. */
    purgedThrough: p.bigint('number').default(0),
  },
  checks: [{ name: 'event_retention_single_row', expression: `id = 1` }],
});
export class EventRetention extends EventRetentionSchema.class {}
EventRetentionSchema.setClass(EventRetention);
