// Waiting for a decision (CONTRACT §4.11): GET /approvals/{id}?wait_s=N held until the approval is decided or expires, or N s pass.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors.ts';
import type { HubEvent, Subscriber } from '../../events/hub.ts';
import type { Actor } from '../../contracts/actor.ts';
import type { ApprovalResponse } from '../../contracts/approvals.ts';
import type { Clock } from '../../contracts/clock.ts';
import { getApproval } from './approvals.ts';
import { releaseWaitSlot, takeWaitSlot } from './store.ts';

/** Waits one user may have in flight on all instances together (CONTRACT §4.11, §5: a 5002 cap, on even without RATE_LIMITS). */
export const MAX_WAITS_PER_USER = 20;

/**
 * Added to a wait's own length in its slot's `heldUntil`: a slot whose instance died stops counting this long
 * after the wait would have ended, and clocks of instances a little apart never cut a live wait's slot short.
 */
const SLOT_MARGIN_S = 5;

/** The instance's fan-out of committed events (src/events/hub.ts), fed by LISTEN/NOTIFY from every instance. */
export type DecisionSource = { add(subscriber: Subscriber): void; remove(subscriber: Subscriber): void };

type Env = { em: EntityManager; clock: Clock; actor: Actor };
type Log = { warn(obj: object, msg: string): void };
type Answer = { approval: ApprovalResponse; etag: string };
type Wake = 'woken' | 'timeout' | 'aborted';

/** One held request: woken by a decision event for its approval, or by shutdown. */
class Waiter {
  readonly approvalId: string;
  /** A wake that came while nobody was listening (between two reads) is kept for the next listen. */
  #pending = false;
  #notify: (() => void) | null = null;

  constructor(approvalId: string) {
    this.approvalId = approvalId;
  }

  wake(): void {
    this.#pending = true;
    this.#notify?.();
  }

  /** Resolves when woken (at once if a wake is pending), after `ms`, or when `signal` aborts. */
  next(ms: number, signal: AbortSignal | undefined): Promise<Wake> {
    if (signal?.aborted === true) return Promise.resolve('aborted');
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve('woken');
    }
    return new Promise<Wake>((resolve) => {
      const done = (why: Wake) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#notify = null;
        this.#pending = false;
        resolve(why);
      };
      const timer = setTimeout(() => done('timeout'), Math.max(0, ms));
      const onAbort = () => done('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#notify = () => done('woken');
    });
  }
}

/**
 * The waits of this instance. A wait listens to the instance's event fan-out, so a decision committed through
 * any instance reaches it through LISTEN/NOTIFY within the fan-out's delay (nothing polls the table); its
 * approval's deadline is a timer of its own; the per-user cap is a row per wait in `approval_waits`, shared
 * by every instance. The fan-out is subscribed to only while waits exist, so an idle instance reads no events
 * for them.
 */
export class ApprovalWaits implements Subscriber {
  readonly #source: DecisionSource;
  readonly #log: Log;
  readonly #byApproval = new Map<string, Set<Waiter>>();
  #closing = false;

  constructor(source: DecisionSource, log: Log) {
    this.#source = source;
    this.#log = log;
  }

  /** Waits held on this instance now. */
  get size(): number {
    let n = 0;
    for (const waiters of this.#byApproval.values()) n += waiters.size;
    return n;
  }

  /** A committed event from the fan-out: a decision or an expiry ends the waits on that approval. */
  offer(hubEvent: HubEvent): void {
    const event = hubEvent.event;
    if (event.type !== 'approval.approved' && event.type !== 'approval.rejected' && event.type !== 'approval.expired') return;
    for (const waiter of this.#byApproval.get(event.data.id) ?? []) waiter.wake();
  }

  /** The service is stopping: every wait is answered now with its approval's current state; new ones at once. */
  endAll(): void {
    this.#closing = true;
    for (const waiters of this.#byApproval.values()) for (const waiter of waiters) waiter.wake();
  }

  /**
   * The approval and its ETag once it is no longer pending, or when `waitS` seconds have passed (then still
   * pending), or the service stops. A non-pending approval is answered at once. While it holds, the wait
   * takes one of its user's MAX_WAITS_PER_USER slots (429/5002 beyond); `signal` aborting (the client went
   * away) ends it at once and frees the slot.
   */
  async wait(env: Env, approvalId: string, waitS: number, signal?: AbortSignal): Promise<Answer> {
    const started = performance.now();
    const waiter = new Waiter(approvalId);
    // Listening before the first read: a decision that commits after the read is not missed.
    this.#watch(waiter);
    let slot: string | null = null;
    try {
      let answer = await getApproval(env, approvalId);
      if (answer.approval.status !== 'pending' || this.#closing || signal?.aborted === true) return answer;
      slot = await this.#takeSlot(env, approvalId, waitS);
      // `answer` is always the latest read, so the state at the moment the wait ends is never read twice.
      for (;;) {
        const left = waitS * 1000 - (performance.now() - started);
        if (left <= 0 || this.#closing) return answer;
        const expiresAt = answer.approval.expires_at;
        // The deadline's timer: getApproval writes the approval expired (and its event) when it is overdue.
        const untilExpiry = expiresAt === null ? Number.POSITIVE_INFINITY : Date.parse(expiresAt) - env.clock.now().getTime();
        const why = await waiter.next(Math.min(left, untilExpiry), signal);
        // The client is gone: nobody reads an answer, so none is made.
        if (why === 'aborted') return answer;
        answer = await getApproval(env, approvalId);
        if (answer.approval.status !== 'pending') return answer;
      }
    } finally {
      this.#unwatch(waiter);
      // A slot that cannot be given back now frees itself at its heldUntil; the answer stands.
      if (slot !== null) await releaseWaitSlot(env.em, slot).catch((error: unknown) => this.#log.warn({ err: error }, 'could not release an approval wait slot'));
    }
  }

  async #takeSlot(env: Env, approvalId: string, waitS: number): Promise<string> {
    const id = randomUUID();
    const now = env.clock.now();
    const heldUntil = new Date(now.getTime() + (waitS + SLOT_MARGIN_S) * 1000);
    const slot = { id, userId: env.actor.userId, approvalId, heldUntil };
    const taken = await env.em.transactional((tx) => takeWaitSlot(tx, slot, { now, max: MAX_WAITS_PER_USER }));
    if (!taken) throw ApiError.rateLimited(5002, 1, `at most ${String(MAX_WAITS_PER_USER)} waits per user may be in flight`);
    return id;
  }

  #watch(waiter: Waiter): void {
    if (this.#byApproval.size === 0) this.#source.add(this);
    const waiters = this.#byApproval.get(waiter.approvalId);
    if (waiters) waiters.add(waiter);
    else this.#byApproval.set(waiter.approvalId, new Set([waiter]));
  }

  #unwatch(waiter: Waiter): void {
    const waiters = this.#byApproval.get(waiter.approvalId);
    if (!waiters) return;
    waiters.delete(waiter);
    if (waiters.size > 0) return;
    this.#byApproval.delete(waiter.approvalId);
    if (this.#byApproval.size === 0) this.#source.remove(this);
  }
}
