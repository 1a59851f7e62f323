// One subscriber's stream, whatever carries it (WebSocket or SSE): channels, replay then live without gap or duplicate, id order.
import { ApiError } from '../errors.ts';
import { endsSession, mayReceive, viewerAfter, type Viewer } from './access.ts';
import type { Channel } from '../contracts/events.ts';
import type { HubEvent, Subscriber } from './hub.ts';

/** What carries a stream to its client. */
export type Outlet = {
  /** Sends one event. The outlet may close the stream from here (e.g. its client reads too slowly). */
  send(event: HubEvent): void;
  /** The stream's own session ended (revoked, its user deleted); nothing more is sent and the transport closes. */
  sessionEnded(): void;
  /** The client cannot keep up: the transport closes so that it reconnects and resumes from its last id. */
  overflow(): void;
  /** The server is stopping: the transport closes so that the client reconnects (to another instance). */
  shutdown(): void;
};

export type ReplaySource = {
  /** Id of the last event the instance has handed out live. */
  readonly position: number;
  replay(channels: readonly Channel[], afterId: number, limit: number): Promise<HubEvent[]>;
};

/** How many events one replay query reads; between pages the outlet gets to notice a slow client. */
const REPLAY_PAGE = 500;

export class EventStream implements Subscriber {
  readonly id: string;
  private viewer: Viewer;
  /** Events up to this id were committed before `viewer` was read; they cannot change it. */
  private viewerAsOf: number;
  private channels = new Set<Channel>();
  /** Id of the last event sent: per stream, ids only increase. */
  private position = 0;
  /** Live events held back while a replay runs, then merged with it by id. */
  private held: HubEvent[] | null = null;
  private heldBytes = 0;
  private closed = false;
  private readonly source: ReplaySource;
  private readonly outlet: Outlet;
  private readonly onClose: (stream: EventStream) => void;
  private readonly maxHeldBytes: number;

  constructor(opts: { id: string; viewer: Viewer; source: ReplaySource; outlet: Outlet; onClose: (stream: EventStream) => void; maxHeldBytes: number }) {
    this.id = opts.id;
    this.viewer = opts.viewer;
    this.source = opts.source;
    this.viewerAsOf = opts.source.position;
    this.outlet = opts.outlet;
    this.onClose = opts.onClose;
    this.maxHeldBytes = opts.maxHeldBytes;
  }

  get userId(): string {
    return this.viewer.userId;
  }

  /** The session the stream acts as; null for a key's. */
  get sessionId(): string | null {
    return this.viewer.sessionId;
  }

  /** The API key the stream acts as; null for a session's. */
  get apiKeyId(): string | null {
    return this.viewer.apiKey?.id ?? null;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  subscribedChannels(): Channel[] {
    return [...this.channels];
  }

  offer(event: HubEvent): void {
    if (this.closed) return;
    if (this.held) {
      this.held.push(event);
      this.heldBytes += event.frame.length;
      // A replay that cannot keep up with live traffic must not hold an unbounded backlog.
      if (this.heldBytes > this.maxHeldBytes) this.outlet.overflow();
      return;
    }
    this.deliver(event);
  }

  /**
   * Adds channels. With `since`, the retained events after it on the stream's channels are sent first, then
   * live ones; `accepted` runs once the subscription stands, before any replayed event is sent. A `since`
   * older than the last event this stream already sent would break id order → 400/2001; one older than
   * the retention window → 409/4000 (nothing changes then).
   */
  async subscribe(channels: readonly Channel[], since: number | undefined, accepted: (channels: Channel[]) => void): Promise<void> {
    if (this.held) throw new Error('one subscribe at a time per stream');
    if (since === undefined) {
      for (const channel of channels) this.channels.add(channel);
      accepted(this.subscribedChannels());
      return;
    }
    if (since < this.position) {
      throw ApiError.badRequest(`since: must not be older than the last event sent on this stream (${String(this.position)})`);
    }
    const before = this.channels;
    const wanted = [...new Set([...before, ...channels])];
    this.held = [];
    this.heldBytes = 0;
    try {
      let cursor = since;
      let first = true;
      for (;;) {
        const page = await this.source.replay(wanted, cursor, REPLAY_PAGE);
        if (this.closed) return;
        if (first) {
          first = false;
          this.channels = new Set(wanted);
          accepted(this.subscribedChannels());
        }
        for (const event of page) {
          this.deliver(event);
          if (this.closed) return;
        }
        const last = page.at(-1);
        if (!last || page.length < REPLAY_PAGE) break;
        cursor = last.id;
      }
    } catch (error) {
      this.channels = before;
      throw error;
    } finally {
      // Null when the stream was closed while the replay ran (close() drops what it held).
      const held: HubEvent[] | null = this.held;
      this.held = null;
      this.heldBytes = 0;
      // Held events the replay already covered are skipped by id; the rest follow in order.
      for (const event of held ?? []) {
        if (this.closed) break;
        this.deliver(event);
      }
    }
  }

  unsubscribe(channels: readonly Channel[]): Channel[] {
    for (const channel of channels) this.channels.delete(channel);
    return this.subscribedChannels();
  }

  /**
   * The session sweep's view of the viewer's authorization, read after every event up to `asOf` had
   * committed (catches changes that came without an event). Ignored if an event newer than that has
   * already updated the viewer.
   */
  refresh(state: { role: Viewer['role']; mustChangePassword: boolean }, asOf: number): void {
    if (asOf < this.viewerAsOf) return;
    this.viewer = { ...this.viewer, role: state.role, mustChangePassword: state.mustChangePassword };
    this.viewerAsOf = asOf;
  }

  /** The session or key ended without an event reaching this stream (e.g. a revocation recorded no event). */
  endSession(): void {
    if (this.closed) return;
    this.close();
    this.outlet.sessionEnded();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.held = null;
    this.onClose(this);
  }

  private deliver(event: HubEvent): void {
    if (endsSession(this.viewer, event)) {
      // Its own revocation is always sent (whatever the channels), then the stream ends.
      this.position = Math.max(this.position, event.id);
      this.outlet.send(event);
      this.endSession();
      return;
    }
    // Authorized with the viewer as it was before this event: a role change applies from the next one.
    if (event.id > this.position && this.channels.has(event.channel) && mayReceive(this.viewer, event)) {
      this.position = event.id;
      this.outlet.send(event);
    }
    if (event.id > this.viewerAsOf) {
      this.viewer = viewerAfter(this.viewer, event);
      this.viewerAsOf = event.id;
    }
  }
}
