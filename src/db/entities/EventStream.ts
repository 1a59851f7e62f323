// Open event streams (WebSocket or SSE) of every instance, so the per-user cap holds across instances.
import { defineEntity, p } from '@mikro-orm/core';

export const EventStreamSchema = defineEntity({
  name: 'EventStream',
  tableName: 'event_streams',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().index('event_streams_user_id_idx'),
    /** The session the stream acts as, or else its API key. */
    sessionId: p.string().length(64).nullable(),
    apiKeyId: p.uuid().nullable(),
    /** The instance serving it; each instance refreshes `seenAt` of its streams, so a crashed one's rows go stale. */
    instanceId: p.uuid().index('event_streams_instance_id_idx'),
    openedAt: p.datetime(3),
    seenAt: p.datetime(3),
  },
  // Exactly one of the two: what the stream acts as.
  checks: [{ name: 'event_streams_holder_check', expression: 'num_nonnulls(session_id, api_key_id) = 1' }],
});
export class EventStream extends EventStreamSchema.class {}
EventStreamSchema.setClass(EventStream);
