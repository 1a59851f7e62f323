// The per-operation sliding-window counter (429/5001), built on rate-limiter-flexible's fixed-window stores.
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

/** What every limiter answers; the transport turns it into RateLimit-* / Retry-After headers. */
export type LimitDecision =
  | {
      readonly allowed: true;
      readonly limit: number;
      /** Calls left now (floor), ≥ 0. */
      readonly remaining: number;
      /** Whole seconds until a slot frees; 0 while one is free. */
      readonly resetSeconds: number;
      readonly retryAfterSeconds: null;
    }
  | {
      readonly allowed: false;
      readonly limit: number;
      readonly remaining: number;
      readonly resetSeconds: number;
      /** Whole seconds (≥ 1) until one more call would be allowed. */
      readonly retryAfterSeconds: number;
    };

/** The part of a rate-limiter-flexible store the sliding window uses (RateLimiterMemory, RateLimiterPostgres). */
export type CounterStore = Pick<RateLimiterAbstract, 'consume' | 'get' | 'reward' | 'points' | 'duration'>;

// The store only keeps counts; it must never refuse on its own. Concurrent over-limit calls push a count
// briefly above the limit before their reward lands, and the PostgreSQL column is `integer`.
const COUNTER_STORE_POINTS = 2_147_483_647;

/** Options for the store behind a SlidingWindowLimiter: the previous window must still be readable. */
export function slidingWindowStoreOptions(windowSeconds: number): { points: number; duration: number } {
  return { points: COUNTER_STORE_POINTS, duration: 2 * windowSeconds };
}

export interface SlidingWindowOptions {
  readonly store: CounterStore;
  readonly limit: number;
  readonly windowSeconds: number;
  /** Milliseconds since the epoch; windows are aligned to it so every instance agrees on their bounds. */
  readonly now?: () => number;
}

interface WindowState {
  /** Count of the previous fixed window. */
  readonly previous: number;
  /** Count of the current fixed window (calls that were allowed). */
  readonly current: number;
  /** Milliseconds elapsed in the current window. */
  readonly elapsed: number;
}

/**
 * Sliding-window counter: weighted = previous × (1 − elapsed/window) + current, allowed while ≤ limit.
 *
 * Each call is counted first and refunded (`reward`) when it tips the weighted count over the limit, so
 * instances sharing one store never both squeeze past the last slot, and rejected calls do not extend a
 * block. The price is that two racing calls may both be refused when only one would have fit.
 * All arithmetic stays in integer milliseconds so decisions at window fractions are exact.
 */
export class SlidingWindowLimiter {
  readonly limit: number;
  readonly windowSeconds: number;
  readonly #store: CounterStore;
  readonly #windowMs: number;
  readonly #now: () => number;

  constructor(options: SlidingWindowOptions) {
    const { store, limit, windowSeconds } = options;
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
    if (!Number.isInteger(windowSeconds) || windowSeconds < 1) {
      throw new RangeError(`windowSeconds must be a positive integer, got ${windowSeconds}`);
    }
    const required = slidingWindowStoreOptions(windowSeconds);
    if (store.duration < required.duration || store.points < required.points) {
      throw new RangeError(
        `sliding window store needs points >= ${required.points} and duration >= ${required.duration} s ` +
          '(use slidingWindowStoreOptions)',
      );
    }
    this.limit = limit;
    this.windowSeconds = windowSeconds;
    this.#store = store;
    this.#windowMs = windowSeconds * 1000;
    this.#now = options.now ?? Date.now;
  }

  /** Counts one call for `key` if it fits, and says how much room is left either way. */
  async consume(key: string): Promise<LimitDecision> {
    const now = Math.floor(this.#now());
    const index = Math.floor(now / this.#windowMs);
    const elapsed = now - index * this.#windowMs;
    const currentKey = `${key}:${index}`;
    const [counted, previous] = await Promise.all([
      this.#store.consume(currentKey, 1),
      this.#store.get(`${key}:${index - 1}`),
    ]);
    const withCall: WindowState = {
      previous: previous?.consumedPoints ?? 0,
      current: counted.consumedPoints,
      elapsed,
    };
    if (this.#weightedExceedsLimit(withCall)) {
      await this.#store.reward(currentKey, 1);
      const without: WindowState = { ...withCall, current: withCall.current - 1 };
      const wait = this.#secondsUntilSlot(without);
      return {
        allowed: false,
        limit: this.limit,
        remaining: this.#remaining(without),
        resetSeconds: Math.max(1, wait),
        retryAfterSeconds: Math.max(1, wait),
      };
    }
    return {
      allowed: true,
      limit: this.limit,
      remaining: this.#remaining(withCall),
      resetSeconds: this.#secondsUntilSlot(withCall),
      retryAfterSeconds: null,
    };
  }

  /**
   * How much room `key` has now, without counting a call: for the RateLimit-* headers of a call refused
   * by another limit (5002), which must not spend a window slot.
   */
  async peek(key: string): Promise<{ readonly limit: number; readonly remaining: number; readonly resetSeconds: number }> {
    const now = Math.floor(this.#now());
    const index = Math.floor(now / this.#windowMs);
    const [current, previous] = await Promise.all([this.#store.get(`${key}:${index}`), this.#store.get(`${key}:${index - 1}`)]);
    const state: WindowState = {
      previous: previous?.consumedPoints ?? 0,
      current: current?.consumedPoints ?? 0,
      elapsed: now - index * this.#windowMs,
    };
    return { limit: this.limit, remaining: this.#remaining(state), resetSeconds: this.#secondsUntilSlot(state) };
  }

  // weighted > limit, multiplied through by the window length to stay in integers.
  #weightedExceedsLimit(s: WindowState): boolean {
    const w = this.#windowMs;
    return s.previous * (w - s.elapsed) + s.current * w > this.limit * w;
  }

  #remaining(s: WindowState): number {
    const w = this.#windowMs;
    return Math.max(0, Math.floor((this.limit * w - s.previous * (w - s.elapsed) - s.current * w) / w));
  }

  /** Whole seconds until weighted + 1 ≤ limit, assuming no other calls arrive meanwhile. */
  #secondsUntilSlot(s: WindowState): number {
    const w = this.#windowMs;
    const left = w - s.elapsed;
    // Calls that may be counted in this window besides the next one.
    const headroom = this.limit - 1 - s.current;
    if (headroom >= 0) {
      // Still in this window: previous × (left − t) ≤ headroom × w  ⇔  t ≥ left − headroom × w / previous.
      // This always resolves by the window's end, where the previous window's weight reaches zero.
      if (s.previous * left <= headroom * w) return 0;
      return Math.ceil((s.previous * left - headroom * w) / (s.previous * 1000));
    }
    // The current window is full: wait for it to become the previous one and decay far enough,
    // current × (1 − e'/w) + 1 ≤ limit  ⇔  e' ≥ w × (current − limit + 1) / current.
    return Math.ceil((left * s.current + w * (s.current - this.limit + 1)) / (s.current * 1000));
  }
}
