// One WebSocket of /api/v1/ws: the subscribe/unsubscribe/ping protocol, error frames, backpressure and close codes.
import type { WebSocket, RawData } from 'ws';
import { ApiError, describeZodError, toApiError, toProblem } from '../errors.ts';
import type { Channel } from '../contracts/events.ts';
import { CLIENT_FRAMES, CLOSE, ClientFrameType, MAX_BAD_FRAMES } from './frames.ts';
import type { HubEvent } from './hub.ts';
import { MAX_UNSENT_BYTES, type Admission, type EventMetrics, type LiveEvents } from './runtime.ts';
import type { EventStream, Outlet } from './stream.ts';

type Log = { warn(obj: object, msg: string): void };

export class EventSocket implements Outlet {
  /** Last time anything (a frame or a pong) arrived; the heartbeat drops the socket when it is too old. */
  lastHeard = Date.now();
  lastPing = Date.now();
  private readonly ws: WebSocket;
  private readonly stream: EventStream;
  private readonly problemOptions: { instance: string; publicUrl: string };
  private readonly log: Log;
  private readonly metrics: EventMetrics;
  private badFrames = 0;
  private readonly inbox: { data: RawData; isBinary: boolean }[] = [];
  private busy = false;
  private closing = false;

  constructor(ws: WebSocket, runtime: LiveEvents, admission: Admission, opts: { requestId: string; publicUrl: string; log: Log }) {
    this.ws = ws;
    this.problemOptions = { instance: opts.requestId, publicUrl: opts.publicUrl };
    this.log = opts.log;
    this.metrics = runtime.metrics;
    this.stream = runtime.attach(admission, this);
    ws.on('message', (data, isBinary) => this.receive(data, isBinary));
    ws.on('pong', () => {
      this.lastHeard = Date.now();
    });
    ws.on('close', () => this.stream.close());
  }

  get isOpen(): boolean {
    return this.ws.readyState === this.ws.OPEN && !this.closing;
  }

  /** Heartbeat step: pings when due, and drops a socket silent for longer than `silenceLimitMs`. */
  heartbeat(now: number, pingIntervalMs: number, silenceLimitMs: number): void {
    // A closing socket is left to the close handshake's own timeout (ws: 30 s), so a client that pauses
    // reading and resumes still reads its close frame (e.g. 1013) instead of a dropped connection.
    if (this.closing) return;
    // While frames are being worked through, reading is paused: the silence is the server's, not the client's.
    if (this.busy) return;
    if (now - this.lastHeard > silenceLimitMs) {
      this.stream.close();
      this.ws.terminate();
      return;
    }
    if (now - this.lastPing >= pingIntervalMs && this.ws.readyState === this.ws.OPEN) {
      this.lastPing = now;
      this.ws.ping();
    }
  }

  /**
   * An event counts as delivered once `ws` has written its frame to the connection, and as dropped when
   * the connection ended first (e.g. a client that stopped reading was closed with 1013 and never read
   * the rest) or the socket was already closing when the event came.
   */
  send(event: HubEvent): void {
    if (!this.isOpen) {
      this.metrics.eventsDropped.inc();
      return;
    }
    this.ws.send(event.frame, this.written);
    this.checkBacklog();
  }

  /** One callback per socket, not a closure per frame (1,000 sockets per event). */
  private readonly written = (error?: Error): void => {
    if (error) this.metrics.eventsDropped.inc();
    else this.metrics.eventsDelivered.inc();
  };

  sessionEnded(): void {
    this.close(CLOSE.sessionRevoked, 'session revoked');
  }

  overflow(): void {
    this.close(CLOSE.tryAgainLater, 'too much unsent data; reconnect with since');
  }

  shutdown(): void {
    this.close(CLOSE.goingAway, 'server shutting down');
    // A client that does not answer the close handshake is not waited for.
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }

  private close(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    this.stream.close();
    this.ws.close(code, reason);
  }

  private write(text: string): void {
    if (!this.isOpen) return;
    this.ws.send(text);
    this.checkBacklog();
  }

  private checkBacklog(): void {
    // A client that does not read makes the data pile up here; past the limit it is cut loose and
    // reconnects with `since`. Nothing more is queued after the close frame, so memory stays bounded.
    if (this.ws.bufferedAmount > MAX_UNSENT_BYTES) this.overflow();
  }

  private receive(data: RawData, isBinary: boolean): void {
    this.lastHeard = Date.now();
    if (this.closing) return;
    this.inbox.push({ data, isBinary });
    if (!this.busy) void this.pump();
  }

  /** Frames are handled one at a time, in order; while one waits (a replay), reading from the socket pauses. */
  private async pump(): Promise<void> {
    this.busy = true;
    try {
      for (let next = this.inbox.shift(); next && !this.closing; next = this.inbox.shift()) {
        const waiting = this.handle(next.data, next.isBinary);
        if (waiting) {
          this.ws.pause();
          await waiting;
          if (this.ws.readyState === this.ws.OPEN) this.ws.resume();
        }
      }
    } finally {
      this.busy = false;
      this.inbox.length = 0;
      this.lastHeard = Date.now();
    }
  }

  /** Handles one frame; returns a promise only when it has to wait. */
  private handle(data: RawData, isBinary: boolean): Promise<void> | undefined {
    if (isBinary) return void this.badFrame('frames must be JSON text, not binary');
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawText(data));
    } catch {
      return void this.badFrame('malformed JSON');
    }
    const kind = ClientFrameType.safeParse(parsed);
    if (!kind.success) return void this.badFrame(describeZodError(kind.error, locate));
    switch (kind.data.type) {
      case 'ping': {
        const frame = CLIENT_FRAMES.ping.safeParse(parsed);
        if (!frame.success) return void this.badFrame(describeZodError(frame.error, locate));
        return void this.write('{"type":"pong"}');
      }
      case 'unsubscribe': {
        const frame = CLIENT_FRAMES.unsubscribe.safeParse(parsed);
        if (!frame.success) return void this.badFrame(describeZodError(frame.error, locate));
        return void this.subscribed(this.stream.unsubscribe(frame.data.channels));
      }
      case 'subscribe': {
        const frame = CLIENT_FRAMES.subscribe.safeParse(parsed);
        if (!frame.success) return void this.badFrame(describeZodError(frame.error, locate));
        const since = frame.data.since === undefined ? undefined : Number(frame.data.since);
        return this.stream.subscribe(frame.data.channels, since, (channels) => this.subscribed(channels)).catch((error: unknown) => {
          const apiError = toApiError(error);
          if (apiError.errorCode === 2001) this.badFrame(apiError.detail);
          else {
            if (apiError.status >= 500) this.log.warn({ err: error }, 'subscribe failed');
            this.error(apiError);
          }
        });
      }
    }
  }

  private subscribed(channels: Channel[]): void {
    this.write(JSON.stringify({ type: 'subscribed', channels }));
  }

  private error(error: ApiError): void {
    this.write(JSON.stringify({ type: 'error', error: toProblem(error, this.problemOptions) }));
  }

  /** An error frame (400/2001); the socket stays open until the MAX_BAD_FRAMES-th, which closes it with 1008. */
  private badFrame(detail: string): void {
    this.badFrames++;
    this.error(ApiError.badRequest(detail));
    if (this.badFrames >= MAX_BAD_FRAMES) this.close(CLOSE.policyViolation, 'too many malformed frames');
  }
}

/** Names a field of a frame the way the client wrote it (`channels.1`), or the frame itself. */
function locate(path: readonly PropertyKey[]): string {
  return path.length === 0 ? 'frame' : path.map(String).join('.');
}

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
