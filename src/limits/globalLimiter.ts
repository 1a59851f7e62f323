// The global per-subject limit (429/5000): a plain rate-limiter-flexible fixed window.
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { WindowPolicy } from './policy.ts';
import type { LimitDecision } from './slidingWindow.ts';

/** The part of a rate-limiter-flexible store the global limiter uses; built with points = limit. */
export type FixedWindowStore = Pick<RateLimiterAbstract, 'consume' | 'points' | 'duration'>;

/** Options for the store behind a GlobalLimiter for one bucket. */
export function globalStoreOptions(policy: WindowPolicy): { points: number; duration: number } {
  return { points: policy.limit, duration: policy.window_s };
}

/**
 * A fixed window is what §5 asks for here: the bucket is a coarse flood guard, so the burst a fixed
 * window allows at its boundary is acceptable and costs one store round trip per request.
 */
export class GlobalLimiter {
  readonly limit: number;
  readonly #store: FixedWindowStore;

  constructor(options: { readonly store: FixedWindowStore }) {
    const { store } = options;
    // duration 0 would mean "never expires" to rate-limiter-flexible, so the bucket would never refill.
    if (!(store.points >= 1 && store.duration > 0)) {
      throw new RangeError(`global store needs points >= 1 and duration > 0, got ${store.points}/${store.duration}`);
    }
    this.#store = store;
    this.limit = store.points;
  }

  async consume(subjectKey: string): Promise<LimitDecision> {
    let res: RateLimiterRes;
    try {
      res = await this.#store.consume(subjectKey, 1);
    } catch (error) {
      // A RateLimiterRes means the window is spent; an Error means the store failed and must surface (503).
      if (!(error instanceof RateLimiterRes)) throw error;
      const wait = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
      return { allowed: false, limit: this.limit, remaining: 0, resetSeconds: wait, retryAfterSeconds: wait };
    }
    return {
      allowed: true,
      limit: this.limit,
      remaining: res.remainingPoints,
      resetSeconds: res.remainingPoints > 0 ? 0 : Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
      retryAfterSeconds: null,
    };
  }
}
