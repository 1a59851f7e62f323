// events.subscribe over SSE: the same stream as a WebSocket, yielding `tracked` events so a reconnect resumes from lastEventId.
import type { EntityManager } from '@mikro-orm/postgresql';
import { tracked, type TrackedEnvelope } from '@trpc/server';
import { ApiError } from '../errors.ts';
import type { Channel, LiveEvent } from '../contracts/events.ts';
import type { HubEvent } from './hub.ts';
import { MAX_UNSENT_BYTES, type EventMetrics, type LiveEvents } from './runtime.ts';
import type { EventStream, Outlet } from './stream.ts';
import type { Actor } from '../contracts/actor.ts';

/**
 * Opens a stream for the signed-in session or API key (with `events:read`): takes a slot under the per-user cap (429/5002), replays the
 * events after `lastEventId` (409/4000 when they are no longer retained), then follows live events. A
 * revoked session or key (or its user's deletion) ends it with 401/1002; a subscriber that falls 1 MiB behind, or a stopping server,
 * ends it without an error event, so the client's EventSource reconnects with its last id.
 */
export async function subscribeEvents(
  { em, events }: { em: EntityManager; events: LiveEvents },
  actor: Actor,
  input: { channels: Channel[]; lastEventId?: string | null | undefined },
  signal: AbortSignal | undefined,
): Promise<AsyncGenerator<TrackedEnvelope<LiveEvent>, void, unknown>> {
  const admission = await events.admitActor(em, actor);
  const queue = new SubscriptionQueue(MAX_UNSENT_BYTES, events.metrics);
  const stream = events.attach(admission, queue);
  const since = input.lastEventId === undefined || input.lastEventId === null ? undefined : Number(input.lastEventId);
  try {
    await stream.subscribe(input.channels, since, () => undefined);
  } catch (error) {
    stream.close();
    throw error;
  }
  return queue.drain(stream, signal);
}

/**
 * The outlet of a subscription: events wait here until tRPC pulls them into the response. An event counts
 * as delivered when it is handed to tRPC's response, and as dropped when the stream ends before that
 * (overflow, shutdown, the client went away) or it arrives after the stream's end was decided.
 */
class SubscriptionQueue implements Outlet {
  private items: HubEvent[] = [];
  private bytes = 0;
  private ended: unknown = null;
  private wake: (() => void) | null = null;
  private readonly maxBytes: number;
  private readonly metrics: EventMetrics;

  constructor(maxBytes: number, metrics: EventMetrics) {
    this.maxBytes = maxBytes;
    this.metrics = metrics;
  }

  send(event: HubEvent): void {
    if (this.ended !== null) {
      this.metrics.eventsDropped.inc();
      return;
    }
    this.items.push(event);
    this.bytes += event.frame.length;
    if (this.bytes > this.maxBytes) this.overflow();
    else this.notify();
  }

  sessionEnded(): void {
    // The session.revoked event already queued is still delivered, then the error.
    this.finish(ApiError.sessionRevoked());
  }

  overflow(): void {
    this.discardQueued();
    this.finish(reconnect('the subscriber fell more than 1 MiB behind; reconnect with lastEventId'));
  }

  shutdown(): void {
    this.discardQueued();
    this.finish(reconnect('the server is shutting down; reconnect'));
  }

  async *drain(stream: EventStream, signal: AbortSignal | undefined): AsyncGenerator<TrackedEnvelope<LiveEvent>, void, unknown> {
    signal?.addEventListener('abort', () => this.notify(), { once: true });
    try {
      for (;;) {
        if (signal?.aborted) return;
        const next = this.items.shift();
        if (next) {
          this.bytes -= next.frame.length;
          this.metrics.eventsDelivered.inc();
          yield tracked(next.event.id, next.event);
          continue;
        }
        if (this.ended !== null) throw this.ended;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
    } finally {
      stream.close();
      // The client went away with events still queued for it.
      this.discardQueued();
    }
  }

  private discardQueued(): void {
    if (this.items.length > 0) this.metrics.eventsDropped.inc(this.items.length);
    this.items = [];
    this.bytes = 0;
  }

  private finish(error: unknown): void {
    if (this.ended !== null) return;
    this.ended = error;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

/** tRPC ends an SSE response on an AbortError without sending an error or `return` event: the client reconnects. */
function reconnect(message: string): DOMException {
  return new DOMException(message, 'AbortError');
}
