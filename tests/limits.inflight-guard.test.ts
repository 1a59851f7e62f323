// Concurrency cap (429/5002): one call in flight per (operation, subject), TTL = the operation's timeout.
import { describe, it, expect } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { InflightGuard, inflightStoreOptions } from '../src/limits/inflightGuard.ts';

function guard(timeoutMs = 30_000) {
  return new InflightGuard({ store: new RateLimiterMemory({ keyPrefix: 'test', ...inflightStoreOptions(timeoutMs) }) });
}

describe('one call in flight per (operation, subject)', () => {
  it('a second acquire while the slot is held is refused with retry_after 1', async () => {
    const g = guard();
    const first = await g.acquire('auth.login:10.0.0.1');
    expect(first.ok).toBe(true);
    expect(await g.acquire('auth.login:10.0.0.1')).toEqual({ ok: false, retryAfterSeconds: 1 });
  });

  it('other subjects are not held up', async () => {
    const g = guard();
    await g.acquire('auth.login:10.0.0.1');
    expect((await g.acquire('auth.login:10.0.0.2')).ok).toBe(true);
  });

  it('of N concurrent acquires exactly one wins', async () => {
    const g = guard();
    const results = await Promise.all(Array.from({ length: 20 }, () => g.acquire('users.create:u1')));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });

  it('a released slot can be taken again', async () => {
    const g = guard();
    const first = await g.acquire('k');
    if (!first.ok) throw new Error('expected the slot');
    await first.release();
    expect((await g.acquire('k')).ok).toBe(true);
  });
});

describe('run() releases the slot however the operation ends', () => {
  it('refuses a concurrent run while one is in progress, then frees the slot after success', async () => {
    const g = guard();
    let finish = (): void => {};
    const running = g.run('k', () => new Promise<string>((resolve) => (finish = () => resolve('done'))));
    await sleep(0);
    expect(await g.run('k', async () => 'second')).toEqual({ ok: false, retryAfterSeconds: 1 });
    finish();
    expect(await running).toEqual({ ok: true, value: 'done' });
    expect(await g.run('k', async () => 'third')).toEqual({ ok: true, value: 'third' });
  });

  it('frees the slot after the operation throws, and the error propagates', async () => {
    const g = guard();
    await expect(g.run('k', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect((await g.acquire('k')).ok).toBe(true);
  });

  it('a failing release does not replace the operation result and is reported', async () => {
    const store = new RateLimiterMemory({ keyPrefix: 'test', ...inflightStoreOptions(30_000) });
    store.delete = () => Promise.reject(new Error('store down'));
    const reported: unknown[] = [];
    const g = new InflightGuard({ store, onReleaseError: (error) => reported.push(error) });
    expect(await g.run('k', async () => 42)).toEqual({ ok: true, value: 42 });
    expect(reported).toHaveLength(1);
  });
});

describe('a crashed holder frees the slot when the TTL passes', () => {
  it('expires after the TTL, and a late release does not free the new holder', async () => {
    const g = guard(1_000);
    const crashed = await g.acquire('k');
    if (!crashed.ok) throw new Error('expected the slot');
    expect((await g.acquire('k')).ok).toBe(false);
    await sleep(1_100);
    const next = await g.acquire('k');
    expect(next.ok).toBe(true);
    await crashed.release();
    expect((await g.acquire('k')).ok).toBe(false);
  });
});

describe('configuration', () => {
  it('refuses a store that never expires its keys', () => {
    const store = new RateLimiterMemory({ points: 1, duration: 0 });
    expect(() => new InflightGuard({ store })).toThrow(/duration/);
  });
});
