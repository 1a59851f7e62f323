// The memory store stays bounded: 100,000 distinct subjects leave nothing behind once their windows pass.
import v8 from 'node:v8';
import vm from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { RequestLimiter, subjectKey, type Subject } from '../src/limits/limiter.ts';
import { resolvePolicy } from '../src/limits/policy.ts';

// A heap reading is only meaningful right after a full collection.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const SUBJECTS = 100_000;
const MB = 1024 * 1024;

describe('memory store with 100,000 distinct subjects', () => {
  it('keys expire with their windows and the heap returns to its baseline', { timeout: 60_000 }, async () => {
    // Short windows, so every key is gone ~2 windows after the load; long enough that the load is still
    // in memory when it ends.
    const windowS = 3;
    const limiter = new RequestLimiter({
      store: { kind: 'memory' },
      policy: resolvePolicy({ 'global.anonymous': { limit: 5, window_s: windowS }, 'auth.login': { limit: 5, window_s: windowS } }),
      now: Date.now,
    });
    const login = limiter.operation('auth.login');
    const subject = (i: number): Subject => ({ kind: 'ip', id: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` });

    const baseline = heapUsed();
    // Every bucket a login touches: global, in-flight slot, sliding window.
    let allowed = 0;
    for (let i = 0; i < SUBJECTS; i++) {
      const key = subjectKey(subject(i));
      const global = await limiter.global(subject(i));
      const slot = await login.inflight?.acquire(key);
      const window = await login.window.consume(key);
      if (slot?.ok) await slot.release();
      if (global.allowed && slot?.ok && window.allowed) allowed++;
    }
    const loaded = heapUsed() - baseline;
    expect(allowed).toBe(SUBJECTS);
    const last = subjectKey(subject(SUBJECTS - 1));
    expect((await login.window.peek(last)).remaining).toBe(4);

    await sleep(2 * windowS * 1000 + 500);
    const settled = heapUsed() - baseline;
    // The load was real (tens of MB of counters), and it is gone again.
    expect(loaded).toBeGreaterThan(20 * MB);
    expect(settled).toBeLessThan(5 * MB);
    // A subject seen before starts from a fresh window in every bucket.
    expect((await login.window.peek(last)).remaining).toBe(5);
    expect((await limiter.global(subject(SUBJECTS - 1))).remaining).toBe(4);
  });
});
