// The instance's fan-out: reads committed events in id order from the outbox and hands each to every open stream.
import type { MikroORM } from '@mikro-orm/postgresql';
import { ApiError } from '../errors.ts';
import { LiveEvent, type Channel } from '../contracts/events.ts';
import { eventsAfter, latestEventId, replayPage, type StoredEvent } from './store.ts';

/** A committed event as the instance passes it around: parsed once, its WebSocket frame serialized once. */
export type HubEvent = {
  id: number;
  channel: Channel;
  audienceUserId: string | null;
  event: LiveEvent;
  /** `{"type":"event","event":…}`, the text frame every socket is sent. */
  frame: string;
};

export interface Subscriber {
  /** Every event the instance reads, in id order, exactly once. */
  offer(event: HubEvent): void;
}

type Log = { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

const READ_BATCH = 1000;

export class EventHub {
  /** Id of the last event handed to subscribers; everything up to it has been offered. */
  position = 0;
  private readonly subscribers = new Set<Subscriber>();
  private readonly orm: MikroORM;
  private readonly log: Log;
  private draining: Promise<void> | null = null;
  /** The highest id a caller of catchUp asked to have read (infinity: whatever is there); 0 when none waits. */
  private wanted = 0;
  private retry: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(orm: MikroORM, log: Log) {
    this.orm = orm;
    this.log = log;
  }

  /** Starts from the newest committed event: streams opened from now on see what commits after it. */
  async init(): Promise<void> {
    this.position = await latestEventId(this.orm.em.fork());
  }

  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.subscribers.clear();
  }

  add(subscriber: Subscriber): void {
    this.subscribers.add(subscriber);
  }

  remove(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber);
  }

  get size(): number {
    return this.subscribers.size;
  }

  /**
   * Reads and dispatches everything committed after `position`; with `through`, only if events up to that
   * id may still be unread (a notification names the highest id its publication took, and a read started
   * for an earlier one may already have gone past it). Calls while a read runs coalesce into one more read
   * after it, so a burst of notifications costs a few queries, not one each.
   */
  catchUp(through = Number.POSITIVE_INFINITY): Promise<void> {
    if (through <= this.position) return this.draining ?? Promise.resolve();
    if (this.subscribers.size === 0 && !this.draining && Number.isFinite(through)) {
      // Nobody to hand them to, so nothing is read: publications are numbered one at a time in commit
      // order, so every id up to a notification's has committed, and a stream opened from now on starts
      // after them, as it would had they been read.
      this.position = through;
      return Promise.resolve();
    }
    this.wanted = Math.max(this.wanted, through);
    if (this.draining) return this.draining;
    this.draining = (async () => {
      try {
        // A request that arrived during a read is met by it when it asked for no more than was read.
        while (this.wanted > this.position && !this.stopped) {
          this.wanted = 0;
          await this.drain();
        }
      } catch (error) {
        // The listener's reconnect triggers the next read; this retry covers a read that failed on its own.
        this.log.warn({ err: error }, 'reading committed events failed; retrying');
        this.retry ??= setTimeout(() => {
          this.retry = null;
          void this.catchUp();
        }, 1000);
      } finally {
        this.wanted = 0;
        this.draining = null;
      }
    })();
    return this.draining;
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const rows = await eventsAfter(this.orm.em.fork(), this.position, READ_BATCH);
      for (const row of rows) {
        // Ids follow commit order, so nothing below `row.id` can still appear: the position only grows.
        this.position = row.id;
        const event = this.toHubEvent(row);
        if (event) this.dispatch(event);
      }
      if (rows.length < READ_BATCH) return;
    }
  }

  private dispatch(event: HubEvent): void {
    for (const subscriber of this.subscribers) {
      try {
        subscriber.offer(event);
      } catch (error) {
        this.log.error({ err: error, event_id: event.id }, 'delivering an event failed');
      }
    }
  }

  /**
   * One page of retained events after `afterId` on `channels`, oldest first. Throws 409/4000 when events
   * after `afterId` may already have been purged (the client must re-read the resources).
   */
  async replay(channels: readonly Channel[], afterId: number, limit: number): Promise<HubEvent[]> {
    const page = await replayPage(this.orm.em.fork(), afterId, channels, limit);
    if (afterId < page.purgedThrough) throw ApiError.conflict(`events before ${page.purgedThrough + 1} are no longer retained`);
    const events: HubEvent[] = [];
    for (const row of page.events) {
      const event = this.toHubEvent(row);
      if (event) events.push(event);
    }
    return events;
  }

  private toHubEvent(row: StoredEvent): HubEvent | null {
    const parsed = LiveEvent.safeParse({
      id: String(row.id),
      type: row.type,
      channel: row.channel,
      occurred_at: row.occurredAt.toISOString(),
      actor: row.actor,
      data: row.data,
    });
    if (!parsed.success) {
      // Only possible if a payload schema changed incompatibly while older events were still retained.
      this.log.error({ event_id: row.id, type: row.type, err: parsed.error }, 'stored event does not match its schema; skipped');
      return null;
    }
    const event = parsed.data;
    return { id: row.id, channel: event.channel, audienceUserId: row.audienceUserId, event, frame: JSON.stringify({ type: 'event', event }) };
  }
}
