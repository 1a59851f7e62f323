// Open event streams (WebSocket or SSE) of every instance, so the per-user cap holds across instances.
import { defineEntity, p } from '@mikro-orm/core';

export const EventStreamSchema = defineEntity({
  name: 'EventStream',
  tableName: 'event_streams',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().index('event_streams_user_id_idx'),
    sessionId: p.string().length(64),
    /** The instance serving it; each instance refreshes `seenAt` of its streams, so a crashed one's rows go stale. */
    instanceId: p.uuid().index('event_streams_instance_id_idx'),
    openedAt: p.datetime(3),
    seenAt: p.datetime(3),
  },
});
export class EventStream extends EventStreamSchema.class {}
EventStreamSchema.setClass(EventStream);
