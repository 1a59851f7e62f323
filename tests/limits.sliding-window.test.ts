// Per-operation sliding window (429/5001): weighted previous + current window, exact retry_after.
import { describe, it, expect } from 'vitest';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { SlidingWindowLimiter, slidingWindowStoreOptions } from '../src/limits/slidingWindow.ts';

const WINDOW_S = 60;
const WINDOW_MS = WINDOW_S * 1000;
// An arbitrary window boundary, so "x% into the next window" is plain arithmetic.
const START = 29_000_000 * WINDOW_MS;

function setup(limit = 5) {
  let now = START;
  const store = new RateLimiterMemory({ keyPrefix: 'test', ...slidingWindowStoreOptions(WINDOW_S) });
  const limiter = new SlidingWindowLimiter({ store, limit, windowSeconds: WINDOW_S, now: () => now });
  return {
    limiter,
    store,
    at(ms: number) {
      now = START + ms;
    },
    async burst(n: number, key = 'user-1') {
      const decisions = [];
      for (let i = 0; i < n; i += 1) decisions.push(await limiter.consume(key));
      return decisions;
    },
  };
}

describe('limit 5 per 60 s: the first 5 calls pass, the 6th is refused', () => {
  it('allows 5 of 5 and rejects the 6th with retry_after until the weighted count falls', async () => {
    const t = setup();
    const decisions = await t.burst(6);
    expect(decisions.slice(0, 5).map((d) => d.allowed)).toEqual([true, true, true, true, true]);
    expect(decisions.slice(0, 5).map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);
    // At the window start the current window must first become the previous one (60 s) and then
    // decay until 5 × (1 − f) + 1 ≤ 5, i.e. f = 0.2 (12 s more).
    expect(decisions[5]).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 72, retryAfterSeconds: 72 });
  });

  it('keeps subjects apart', async () => {
    const t = setup();
    await t.burst(5, 'user-1');
    expect((await t.limiter.consume('user-2')).allowed).toBe(true);
  });
});

describe('the previous window still weighs in after the boundary (a fixed window would reset)', () => {
  it('10% into the next window is still refused, with retry_after 6 s', async () => {
    const t = setup();
    await t.burst(5);
    t.at(WINDOW_MS + 6_000);
    // weighted = 5 × 0.9 + 1 = 5.5 > 5; one more call needs 5 × (1 − f) ≤ 4 → f ≥ 0.2 → 12 s in → 6 s from now.
    expect(await t.limiter.consume('user-1')).toEqual({
      allowed: false,
      limit: 5,
      remaining: 0,
      resetSeconds: 6,
      retryAfterSeconds: 6,
    });
  });

  it('retry_after is exact: refused 1 ms before it elapses, allowed when it has', async () => {
    const t = setup();
    await t.burst(5);
    t.at(WINDOW_MS + 6_000);
    expect((await t.limiter.consume('user-1')).retryAfterSeconds).toBe(6);
    t.at(WINDOW_MS + 12_000 - 1);
    expect((await t.limiter.consume('user-1')).allowed).toBe(false);
    t.at(WINDOW_MS + 12_000);
    const next = await t.limiter.consume('user-1');
    expect(next.allowed).toBe(true);
    expect(next.remaining).toBe(0);
  });

  it('60% into the next window, the previous 5 weigh 2: three more pass and the fourth is refused', async () => {
    const t = setup();
    await t.burst(5);
    t.at(WINDOW_MS + 36_000);
    const decisions = await t.burst(4);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.slice(0, 3).map((d) => d.remaining)).toEqual([2, 1, 0]);
    // 5 × (1 − f) + 3 + 1 ≤ 5 → f ≥ 0.8 → 48 s in → 12 s from now.
    expect(decisions[3]?.retryAfterSeconds).toBe(12);
  });

  it('40% into the next window, the previous 5 weigh 3: two more pass and the third is refused', async () => {
    const t = setup();
    await t.burst(5);
    t.at(WINDOW_MS + 24_000);
    const decisions = await t.burst(3);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
  });

  it('two windows later the old calls no longer count', async () => {
    const t = setup();
    await t.burst(5);
    t.at(2 * WINDOW_MS);
    expect((await t.burst(5)).every((d) => d.allowed)).toBe(true);
  });
});

describe('rejected calls are not counted', () => {
  it('hammering while refused does not extend the block', async () => {
    const t = setup();
    await t.burst(5);
    const refused = await t.burst(50);
    expect(refused.every((d) => !d.allowed && d.retryAfterSeconds === 72)).toBe(true);
    t.at(WINDOW_MS + 12_000);
    expect((await t.limiter.consume('user-1')).allowed).toBe(true);
  });

  it('a refusal leaves the stored count of the window unchanged', async () => {
    const t = setup();
    await t.burst(8);
    const index = START / WINDOW_MS;
    expect((await t.store.get(`user-1:${index}`))?.consumedPoints).toBe(5);
  });
});

describe('RateLimit headers: remaining and reset', () => {
  it('reset is 0 while a slot is free and the wait for the next slot once none is', async () => {
    const t = setup();
    await t.burst(5);
    t.at(WINDOW_MS + 36_000);
    const [first, , third] = await t.burst(3);
    expect(first).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 0, retryAfterSeconds: null });
    expect(third).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 12 });
  });
});

describe('peek: the room left, without counting a call', () => {
  it('reports what the next consume would see and leaves the count unchanged', async () => {
    const t = setup();
    expect(await t.limiter.peek('user-1')).toEqual({ limit: 5, remaining: 5, resetSeconds: 0 });
    await t.burst(5);
    expect(await t.limiter.peek('user-1')).toEqual({ limit: 5, remaining: 0, resetSeconds: 72 });
    t.at(WINDOW_MS + 36_000);
    for (let i = 0; i < 3; i++) await t.limiter.peek('user-1');
    expect(await t.limiter.peek('user-1')).toEqual({ limit: 5, remaining: 3, resetSeconds: 0 });
    // Peeks spent nothing: the previous 5 weigh 2, so 3 calls still pass.
    expect((await t.burst(4)).map((d) => d.allowed)).toEqual([true, true, true, false]);
  });
});

describe('configuration', () => {
  it('refuses a store that forgets the previous window before it stops counting', () => {
    const store = new RateLimiterMemory({ ...slidingWindowStoreOptions(WINDOW_S), duration: WINDOW_S });
    expect(() => new SlidingWindowLimiter({ store, limit: 5, windowSeconds: WINDOW_S })).toThrow(/duration/);
  });
});

describe('constructor checks', () => {
  const storeFor = (windowSeconds: number, overrides: { points?: number; duration?: number } = {}) =>
    new RateLimiterMemory({ ...slidingWindowStoreOptions(windowSeconds), ...overrides });

  it('the store options keep two windows of counts and never refuse on their own', () => {
    expect(slidingWindowStoreOptions(60)).toEqual({ points: 2_147_483_647, duration: 120 });
    expect(slidingWindowStoreOptions(1)).toEqual({ points: 2_147_483_647, duration: 2 });
  });

  it('accepts the smallest configuration (limit 1, a 1 s window) and exposes limit and window', () => {
    const limiter = new SlidingWindowLimiter({ store: storeFor(1), limit: 1, windowSeconds: 1 });
    expect(limiter.limit).toBe(1);
    expect(limiter.windowSeconds).toBe(1);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses limit %s with a RangeError naming it', (limit) => {
    expect(() => new SlidingWindowLimiter({ store: storeFor(WINDOW_S), limit, windowSeconds: WINDOW_S })).toThrow(
      new RangeError(`limit must be a positive integer, got ${limit}`),
    );
  });

  it.each([0, -60, 0.5, 60.5, Number.NaN])('refuses windowSeconds %s with a RangeError naming it', (windowSeconds) => {
    expect(() => new SlidingWindowLimiter({ store: storeFor(WINDOW_S), limit: 5, windowSeconds })).toThrow(
      new RangeError(`windowSeconds must be a positive integer, got ${windowSeconds}`),
    );
  });

  it('refuses a store that keeps counts for less than two windows, and takes one that keeps them exactly that long or longer', () => {
    expect(() => new SlidingWindowLimiter({ store: storeFor(WINDOW_S, { duration: 2 * WINDOW_S - 1 }), limit: 5, windowSeconds: WINDOW_S })).toThrow(RangeError);
    expect(() => new SlidingWindowLimiter({ store: storeFor(WINDOW_S, { duration: 2 * WINDOW_S }), limit: 5, windowSeconds: WINDOW_S })).not.toThrow();
    expect(() => new SlidingWindowLimiter({ store: storeFor(WINDOW_S, { duration: 10 * WINDOW_S }), limit: 5, windowSeconds: WINDOW_S })).not.toThrow();
  });

  it('refuses a store that would refuse calls itself (fewer points than the counter needs)', () => {
    const points = slidingWindowStoreOptions(WINDOW_S).points;
    const refused = () => new SlidingWindowLimiter({ store: storeFor(WINDOW_S, { points: points - 1 }), limit: 5, windowSeconds: WINDOW_S });
    expect(refused).toThrow(RangeError);
    expect(refused).toThrow(`sliding window store needs points >= ${points} and duration >= ${2 * WINDOW_S} s (use slidingWindowStoreOptions)`);
    // The limit itself is no substitute: a store with exactly `limit` points would refuse before the window does.
    expect(() => new SlidingWindowLimiter({ store: storeFor(WINDOW_S, { points: 5 }), limit: 5, windowSeconds: WINDOW_S })).toThrow(RangeError);
  });

  it('checks the window against the store it is given: a store sized for a shorter window is refused', () => {
    expect(() => new SlidingWindowLimiter({ store: storeFor(30), limit: 5, windowSeconds: 60 })).toThrow(/duration >= 120 s/);
    expect(() => new SlidingWindowLimiter({ store: storeFor(120), limit: 5, windowSeconds: 60 })).not.toThrow();
  });
});
