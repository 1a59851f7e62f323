// The events subsystem of one instance: listener and fan-out, stream admission under the per-user cap, and its periodic jobs.
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import type { Metrics } from '../metrics/registry.ts';
import { apiKeyStates } from '../services/apiKeys/resolve.ts';
import { redeemTicket, ticketIsRedeemable } from '../services/auth/wsTickets.ts';
import type { Viewer } from './access.ts';
import { EventHub } from './hub.ts';
import { NotificationListener } from './listener.ts';
import { recordedEventsIn } from './record.ts';
import {
  publishEvents,
  registerStream,
  removeInstanceStreams,
  sessionStates,
  touchStreams,
  unregisterStreams,
} from './store.ts';
import { EventStream, type Outlet } from './stream.ts';
import type { Clock } from '../contracts/clock.ts';
import type { Actor } from '../contracts/actor.ts';

/** Intervals and limits; the defaults are CONTRACT §4.8's, tests shorten them. */
export type EventsTimings = {
  /** The server pings every socket this often… */
  pingIntervalMs: number;
  /** …and drops one it has not heard from for this long. */
  silenceLimitMs: number;
  /** How often the sessions behind open streams are checked (endings and changes that came without an event: expiry, other programs). */
  sessionSweepMs: number;
  /** How often this instance marks its streams as still open in the shared registry. */
  registryHeartbeatMs: number;
  /** A registered stream not marked for this long belongs to a dead instance and no longer counts. */
  registryStaleMs: number;
  /**
   * How often each instance publishes whatever committed events are still unpublished. Normally the
   * recording instance publishes right after the commit; this covers events whose publication was missed
   * (the process stopped right after committing, or another program recorded them).
   */
  publishPollMs: number;
};

export const DEFAULT_TIMINGS: EventsTimings = {
  pingIntervalMs: 25_000,
  silenceLimitMs: 60_000,
  sessionSweepMs: 1000,
  registryHeartbeatMs: 10_000,
  registryStaleMs: 30_000,
  publishPollMs: 500,
};

/** Events numbered per publishing statement. */
const PUBLISH_BATCH = 1000;

/** Unsent data (or, while a replay runs, held-back events) beyond which a client counts as not reading. */
export const MAX_UNSENT_BYTES = 1024 * 1024;

/** A stream admitted under the per-user cap, not yet attached to its transport. */
export type Admission = { streamId: string; viewer: Viewer; username: string };

/** The instruments of CONTRACT §4.10 the events subsystem keeps (see docs/operations.md for their definitions). */
export type EventMetrics = Pick<Metrics, 'eventStreams' | 'eventsDelivered' | 'eventsDropped'>;

type RuntimeDeps = { config: Config; orm: MikroORM; clock: Clock; logger: FastifyBaseLogger; metrics: EventMetrics };

/** What the rest of the service uses of an instance's live events (Deps names this, not the class below). */
export interface LiveEvents {
  /** This instance's fan-out of committed events to its open streams. */
  readonly hub: EventHub;
  readonly timings: EventsTimings;
  readonly metrics: EventMetrics;
  /** Set when the WebSocket route is registered: what `capabilities.events` reports. */
  websocketServed: boolean;
  readonly listenerPid: number | null;
  readonly openStreams: number;
  publish(): Promise<number>;
  admitTicket(em: EntityManager, ticket: string): Promise<Admission>;
  ticketIsRedeemable(em: EntityManager, ticket: string): Promise<boolean>;
  admitActor(em: EntityManager, actor: Actor): Promise<Admission>;
  attach(admission: Admission, outlet: Outlet): EventStream;
  releaseAdmission(admission: Admission): void;
  shutdownStreams(): void;
  stop(): Promise<void>;
}

export class EventsRuntime implements LiveEvents {
  readonly hub: EventHub;
  readonly instanceId = randomUUID();
  readonly timings: EventsTimings;
  /** Updated by the runtime (open streams) and by the outlets (events delivered or dropped). */
  readonly metrics: EventMetrics;
  private readonly deps: RuntimeDeps;
  private readonly listener: NotificationListener;
  private readonly streams = new Map<EventStream, Outlet>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<string>();
  private unregisterQueue: string[] = [];
  private publishing: Promise<number> | null = null;
  private publishAgain = false;
  /** The transaction a savepoint is being opened in, by the EntityManager opening it. */
  private readonly openingIn = new WeakMap<object, object>();
  /** Each savepoint's transaction (the ORM links none). */
  private readonly parentOf = new WeakMap<object, object>();
  /** Transactions whose savepoints committed events: their own commit publishes them. */
  private readonly awaitingCommit = new WeakSet<object>();
  private unregisterTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Set when the WebSocket route is registered: what `capabilities.events` reports. */
  websocketServed = false;

  private constructor(deps: RuntimeDeps, databaseUrl: string, timings: EventsTimings) {
    this.deps = deps;
    this.timings = timings;
    this.metrics = deps.metrics;
    const log = deps.logger.child({ component: 'events' });
    this.hub = new EventHub(deps.orm, log);
    this.listener = new NotificationListener({
      connectionString: databaseUrl,
      onNotify: (publishedThrough) => void this.hub.catchUp(publishedThrough ?? undefined),
      // After a gap (database restart, lost connection) whatever committed meanwhile is published and read.
      onListening: () => {
        void this.publish();
        void this.hub.catchUp();
      },
      log,
    });
    // Right after a transaction that recorded events commits, this instance publishes them; events recorded
    // in a savepoint wait for the transaction it was opened in, up to the outermost one.
    deps.orm.em.getEventManager().registerSubscriber({
      beforeTransactionStart: ({ em, transaction }) => {
        // A savepoint is about to open in `transaction`; the same `em` announces the savepoint next.
        if (isObject(transaction)) this.openingIn.set(em, transaction);
      },
      afterTransactionStart: ({ em, transaction }) => {
        const parent = this.openingIn.get(em);
        this.openingIn.delete(em);
        if (parent && isObject(transaction)) this.parentOf.set(transaction, parent);
      },
      afterTransactionCommit: ({ transaction }) => {
        if (this.stopped || !isObject(transaction)) return;
        if (!recordedEventsIn(transaction) && !this.awaitingCommit.has(transaction)) return;
        const parent = 'savepointName' in transaction && transaction.savepointName !== undefined ? this.parentOf.get(transaction) : undefined;
        if (parent) this.awaitingCommit.add(parent);
        else void this.publish();
      },
    });
  }

  static async start(deps: RuntimeDeps, databaseUrl: string, timings: Partial<EventsTimings> = {}): Promise<EventsRuntime> {
    const runtime = new EventsRuntime(deps, databaseUrl, { ...DEFAULT_TIMINGS, ...timings });
    // Listening before reading the newest id: nothing committed in between can be missed.
    await runtime.listener.start();
    await runtime.hub.init();
    runtime.every(runtime.timings.sessionSweepMs, 'session sweep', () => runtime.sweepSessions());
    runtime.every(runtime.timings.registryHeartbeatMs, 'stream registry heartbeat', () => runtime.heartbeat());
    runtime.every(runtime.timings.publishPollMs, 'event publication', async () => void (await runtime.publish()));
    return runtime;
  }

  /**
   * Publishes every committed event still without an id; the streams get them from the read the
   * publication's notification starts. Calls while one runs coalesce into one more round after it, so
   * everything committed before the call is published when the returned promise settles. Resolves to the
   * number of events published.
   */
  publish(): Promise<number> {
    if (this.publishing) {
      this.publishAgain = true;
      return this.publishing;
    }
    this.publishing = (async () => {
      let total = 0;
      try {
        do {
          this.publishAgain = false;
          for (;;) {
            const published = await publishEvents(this.deps.orm.em.fork(), PUBLISH_BATCH);
            total += published;
            if (published < PUBLISH_BATCH) break;
          }
        } while (this.publishAgain && !this.stopped);
      } catch (error) {
        // The poll and the listener's reconnect publish again; nothing is lost meanwhile.
        this.deps.logger.warn({ err: error }, 'publishing events failed');
      } finally {
        this.publishing = null;
      }
      // The publication's notification reaches this instance too and names the ids it published, so the
      // read it starts is the one read of them here. While the listener is down (it reads everything
      // once it listens again), this instance reads its own events now rather than wait for it.
      if (total > 0 && !this.listener.listening) await this.hub.catchUp();
      return total;
    })();
    return this.publishing;
  }

  /** The connection LISTEN runs on (its server pid), for tests that cut it. */
  get listenerPid(): number | null {
    return this.listener.backendPid;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /** Redeems a WebSocket ticket and takes a stream slot, in one transaction: a refused slot leaves the ticket unused. */
  async admitTicket(em: EntityManager, ticket: string): Promise<Admission> {
    return em.transactional(async (tx) => {
      const now = this.deps.clock.now();
      const holder = await redeemTicket({ em: tx, clock: this.deps.clock }, ticket);
      if (!holder) throw ApiError.unauthorized('invalid, expired or already used ticket');
      const viewer: Viewer = {
        userId: holder.userId,
        sessionId: holder.sessionId,
        apiKey: holder.apiKey,
        role: holder.role,
        mustChangePassword: holder.mustChangePassword,
        deleted: false,
      };
      return { streamId: await this.takeSlot(tx, viewer, now), viewer, username: holder.username };
    });
  }

  /** Whether a ticket would be admitted, without using it (for requests that are not upgrades). */
  async ticketIsRedeemable(em: EntityManager, ticket: string): Promise<boolean> {
    return ticketIsRedeemable({ em, clock: this.deps.clock }, ticket);
  }

  /** Takes a stream slot for an authenticated session or API key (the tRPC subscription). */
  async admitActor(em: EntityManager, actor: Actor): Promise<Admission> {
    return em.transactional(async (tx) => {
      const apiKey = actor.apiKey ? { id: actor.apiKey.id, scopes: actor.apiKey.scopes } : null;
      const viewer: Viewer = { userId: actor.userId, sessionId: actor.sessionId, apiKey, role: actor.role, mustChangePassword: actor.mustChangePassword, deleted: false };
      return { streamId: await this.takeSlot(tx, viewer, this.deps.clock.now()), viewer, username: actor.username };
    });
  }

  private async takeSlot(tx: EntityManager, viewer: Viewer, now: Date): Promise<string> {
    const id = randomUUID();
    const max = this.deps.config.eventsMaxStreamsPerUser;
    const staleBefore = new Date(now.getTime() - this.timings.registryStaleMs);
    const stream = { id, userId: viewer.userId, sessionId: viewer.sessionId, apiKeyId: viewer.apiKey?.id ?? null, instanceId: this.instanceId };
    const admitted = await registerStream(tx, stream, { now, staleBefore, max });
    if (!admitted) throw ApiError.rateLimited(5002, 1, `at most ${String(max)} open event streams per user`);
    return id;
  }

  /** Starts delivering to an admitted stream through its transport. */
  attach(admission: Admission, outlet: Outlet): EventStream {
    const stream = new EventStream({
      id: admission.streamId,
      viewer: admission.viewer,
      source: this.hub,
      outlet,
      maxHeldBytes: MAX_UNSENT_BYTES,
      onClose: (closed) => this.release(closed),
    });
    if (this.stopped) {
      outlet.shutdown();
      stream.close();
      return stream;
    }
    this.streams.set(stream, outlet);
    this.metrics.eventStreams.inc();
    this.hub.add(stream);
    return stream;
  }

  /** Gives back a slot that was admitted but never attached (the upgrade failed). */
  releaseAdmission(admission: Admission): void {
    this.queueUnregister(admission.streamId);
  }

  /** Every way a stream ends (client gone, revocation, backpressure, heartbeat, shutdown) closes it, which lands here once. */
  private release(stream: EventStream): void {
    this.hub.remove(stream);
    if (this.streams.delete(stream)) {
      this.metrics.eventStreams.dec();
      this.queueUnregister(stream.id);
    }
  }

  private queueUnregister(id: string): void {
    this.unregisterQueue.push(id);
    // Batched: a thousand sockets dropping at once cost one statement, not a thousand.
    this.unregisterTimer ??= setTimeout(() => {
      this.unregisterTimer = null;
      const ids = this.unregisterQueue;
      this.unregisterQueue = [];
      unregisterStreams(this.deps.orm.em.fork(), ids).catch((error: unknown) => this.deps.logger.warn({ err: error }, 'unregistering event streams failed'));
    }, 50);
  }

  /** Ends every stream (the server is stopping): sockets close with 1001, subscriptions end so clients reconnect. */
  shutdownStreams(): void {
    this.stopped = true;
    for (const [stream, outlet] of [...this.streams]) {
      stream.close();
      outlet.shutdown();
    }
  }

  async stop(): Promise<void> {
    this.shutdownStreams();
    for (const timer of this.timers) clearInterval(timer);
    if (this.unregisterTimer) clearTimeout(this.unregisterTimer);
    this.hub.stop();
    await this.listener.stop();
    await removeInstanceStreams(this.deps.orm.em.fork(), this.instanceId).catch((error: unknown) =>
      this.deps.logger.warn({ err: error }, 'removing this instance’s event streams failed'),
    );
  }

  private every(ms: number, name: string, job: () => Promise<void>): void {
    const timer = setInterval(() => {
      // A job still running (slow database) is not started a second time.
      if (this.running.has(name)) return;
      this.running.add(name);
      job()
        .catch((error: unknown) => this.deps.logger.warn({ err: error }, `${name} failed`))
        .finally(() => this.running.delete(name));
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }

  /**
   * Closes streams whose session ended and refreshes the others' authorization. Every revocation through the
   * service records a `session.revoked` event, which closes the stream at once (and every change of a role,
   * org roles or must_change_password a `user.updated`); this sweep is for what comes without one: a session
   * that ended by time (its refresh window is over: no event, CONTRACT §4.8 names only revocations), and a
   * revocation or user change written by something that records no event (a direct SQL fix, an older
   * release during a rolling upgrade). Within a second.
   */
  private async sweepSessions(): Promise<void> {
    if (this.streams.size === 0) return;
    const bySession = new Map<string, EventStream[]>();
    const byKey = new Map<string, EventStream[]>();
    for (const stream of this.streams.keys()) {
      const { sessionId, apiKeyId } = stream;
      if (sessionId !== null) bySession.set(sessionId, [...(bySession.get(sessionId) ?? []), stream]);
      else if (apiKeyId !== null) byKey.set(apiKeyId, [...(byKey.get(apiKeyId) ?? []), stream]);
    }
    const asOf = this.hub.position;
    const now = this.deps.clock.now();
    const em = this.deps.orm.em.fork();
    // A key's revocation records no event (CONTRACT §4.8 has none), so for a key's stream this sweep is what
    // closes it, within a second on whichever instance serves it; so does its user's deletion.
    const [sessions, keys] = await Promise.all([sessionStates(em, [...bySession.keys()], now), apiKeyStates(em.fork(), [...byKey.keys()], now)]);
    const states = [
      ...sessions.map((s) => ({ streams: bySession.get(s.sessionId) ?? [], ended: s.ended, role: s.role, mustChangePassword: s.mustChangePassword })),
      // The must-change-password gate does not concern keys (CONTRACT §3.5).
      ...keys.map((k) => ({ streams: byKey.get(k.apiKeyId) ?? [], ended: k.ended, role: k.role, mustChangePassword: false })),
    ];
    // What was read may include changes whose events are committed but not yet dispatched (an ending, a role or
    // password-change flag): publish and read the outbox first, so each of those events reaches the streams
    // under the authorization that held before it (and is sent before a close), and only then the state
    // read here applies; an event newer than `asOf` that already updated a viewer wins over it.
    await this.publish();
    await this.hub.catchUp();
    for (const state of states) {
      for (const stream of state.streams) {
        if (stream.isClosed) continue;
        if (state.ended || state.role === null) stream.endSession();
        else stream.refresh({ role: state.role, mustChangePassword: state.mustChangePassword }, asOf);
      }
    }
  }

  private async heartbeat(): Promise<void> {
    const ids = [...this.streams.keys()].map((s) => s.id);
    if (ids.length > 0) await touchStreams(this.deps.orm.em.fork(), ids, this.deps.clock.now());
  }
}

// The ORM types a transaction `any`: a Kysely transaction, or a savepoint (which carries its name).
function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
