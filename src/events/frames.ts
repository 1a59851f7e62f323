// The WebSocket protocol's frames (CONTRACT §4.8), client → server and server → client, as zod schemas.
import { z } from 'zod';
import { ProblemDetailSchema } from '../errors.ts';
import { CHANNELS, Channel, EventId, LiveEvent } from '../contracts/events.ts';

/** Close codes of the socket (RFC 6455 §7.4, plus 4001 of CONTRACT §4.8). */
export const CLOSE = {
  goingAway: 1001,
  policyViolation: 1008,
  tryAgainLater: 1013,
  sessionRevoked: 4001,
} as const;

/** Malformed frames a socket may send; the last of them closes it with 1008. */
export const MAX_BAD_FRAMES = 10;

/** Largest frame a client may send (every valid one is far smaller); larger ones close the socket with 1009. */
export const MAX_FRAME_BYTES = 64 * 1024;

const Channels = z.array(Channel).min(1).max(CHANNELS.length * 2);

export const SubscribeFrame = z
  .strictObject({
    type: z.literal('subscribe'),
    channels: Channels.describe('Channels to add to this socket.'),
    since: EventId.optional().describe(
      'Replay the retained events after this id on the socket\'s channels first, then continue live (no gap, no duplicate).',
    ),
  })
  .meta({ id: 'SubscribeFrame', title: 'subscribe' });

export const UnsubscribeFrame = z
  .strictObject({ type: z.literal('unsubscribe'), channels: Channels.describe('Channels to remove from this socket.') })
  .meta({ id: 'UnsubscribeFrame', title: 'unsubscribe' });

export const PingFrame = z.strictObject({ type: z.literal('ping') }).meta({ id: 'PingFrame', title: 'ping' });

/** Frame types a client may send; checked first so that an unknown type is named as such. */
export const ClientFrameType = z.looseObject({ type: z.enum(['subscribe', 'unsubscribe', 'ping']) });
export const CLIENT_FRAMES = { subscribe: SubscribeFrame, unsubscribe: UnsubscribeFrame, ping: PingFrame } as const;

export const SubscribedFrame = z
  .object({ type: z.literal('subscribed'), channels: z.array(Channel).describe('Every channel the socket is now subscribed to.') })
  .meta({ id: 'SubscribedFrame', title: 'subscribed' });

export const EventFrame = z.object({ type: z.literal('event'), event: LiveEvent }).meta({ id: 'EventFrame', title: 'event' });

export const PongFrame = z.object({ type: z.literal('pong') }).meta({ id: 'PongFrame', title: 'pong' });

export const ErrorFrame = z
  .object({ type: z.literal('error'), error: ProblemDetailSchema })
  .meta({ id: 'ErrorFrame', title: 'error' });
