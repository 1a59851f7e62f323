// Global per-subject limit (429/5000): fixed 60 s window.
import { describe, it, expect } from 'vitest';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { GlobalLimiter, globalStoreOptions } from '../src/limits/globalLimiter.ts';

function limiter(limit: number) {
  const store = new RateLimiterMemory({ keyPrefix: 'global', ...globalStoreOptions({ limit, window_s: 60 }) });
  return new GlobalLimiter({ store });
}

describe('5000 global limit per subject, fixed 60 s window', () => {
  it('allows the limit and refuses the next call with retry_after within the window', async () => {
    const g = limiter(3);
    const allowed = [await g.consume('ip:10.0.0.1'), await g.consume('ip:10.0.0.1'), await g.consume('ip:10.0.0.1')];
    expect(allowed.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    expect(allowed[2]?.resetSeconds).toBe(60);
    const refused = await g.consume('ip:10.0.0.1');
    expect(refused).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 60, retryAfterSeconds: 60 });
  });

  it('counts each subject separately', async () => {
    const g = limiter(1);
    await g.consume('user:a');
    expect((await g.consume('user:b')).allowed).toBe(true);
  });

  it('surfaces store failures instead of treating them as a refusal', async () => {
    const store = new RateLimiterMemory({ points: 1, duration: 60 });
    store.consume = () => Promise.reject(new Error('store down'));
    await expect(new GlobalLimiter({ store }).consume('k')).rejects.toThrow('store down');
  });
});
