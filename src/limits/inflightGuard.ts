// The concurrency cap (429/5002): one call in flight per (operation, subject), freed on release or after a TTL.
import { performance } from 'node:perf_hooks';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

/** The part of a rate-limiter-flexible store the guard uses; built with points 1, duration = TTL seconds. */
export type SlotStore = Pick<RateLimiterAbstract, 'consume' | 'delete' | 'points' | 'duration'>;

/** Options for the store behind an InflightGuard for an operation with the given timeout. */
export function inflightStoreOptions(timeoutMs: number): { points: number; duration: number } {
  return { points: 1, duration: Math.ceil(timeoutMs / 1000) };
}

export type InflightRefused = { readonly ok: false; readonly retryAfterSeconds: 1 };
export type InflightHeld = { readonly ok: true; readonly release: () => Promise<void> };

export interface InflightGuardOptions {
  readonly store: SlotStore;
  /**
   * Called when `run` could not release a slot (store down). The operation's own outcome stands; the
   * slot frees itself when its TTL passes. Wire this to the logger.
   */
  readonly onReleaseError?: (error: unknown, key: string) => void;
}

const REFUSED: InflightRefused = Object.freeze({ ok: false, retryAfterSeconds: 1 });

/**
 * `consume` on a one-point key acquires, `delete` releases, the key's expiry is the TTL, so the
 * PostgreSQL store shares slots across instances and a crashed holder blocks at most one TTL.
 */
export class InflightGuard {
  readonly ttlMs: number;
  readonly #store: SlotStore;
  readonly #onReleaseError: (error: unknown, key: string) => void;

  constructor(options: InflightGuardOptions) {
    const { store } = options;
    // duration 0 would mean "never expires" to rate-limiter-flexible: a crashed holder would lock forever.
    if (store.points !== 1 || !(store.duration > 0)) {
      throw new RangeError(`inflight store needs points = 1 and duration > 0, got ${store.points}/${store.duration}`);
    }
    this.#store = store;
    this.ttlMs = store.duration * 1000;
    this.#onReleaseError = options.onReleaseError ?? (() => {});
  }

  async acquire(key: string): Promise<InflightHeld | InflightRefused> {
    try {
      await this.#store.consume(key, 1);
    } catch (error) {
      // rate-limiter-flexible rejects with a RateLimiterRes when the slot is taken, with an Error when the store fails.
      if (error instanceof RateLimiterRes) return REFUSED;
      throw error;
    }
    const acquiredAt = performance.now();
    let released = false;
    const release = async (): Promise<void> => {
      if (released) return;
      released = true;
      // Once our TTL has passed the slot may belong to someone else; deleting it would admit a second caller.
      if (performance.now() - acquiredAt >= this.ttlMs) return;
      await this.#store.delete(key);
    };
    return { ok: true, release };
  }

  /** Runs `fn` holding the slot for `key`, releasing it whether `fn` succeeds or throws. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<{ readonly ok: true; readonly value: T } | InflightRefused> {
    const slot = await this.acquire(key);
    if (!slot.ok) return slot;
    try {
      return { ok: true, value: await fn() };
    } finally {
      try {
        await slot.release();
      } catch (error) {
        this.#onReleaseError(error, key);
      }
    }
  }
}
