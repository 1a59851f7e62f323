// Schemas of events.subscribe: the channels and the id to resume after.
import { z } from 'zod';
import { Channel, CHANNELS, EventId } from '../../events/catalogue.ts';

export const SubscribeEventsInput = z.strictObject({
  channels: z.array(Channel).min(1).max(CHANNELS.length * 2),
  /** Set by httpSubscriptionLink on reconnect (the id of the last event received). */
  lastEventId: EventId.nullish(),
});
