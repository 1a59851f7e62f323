// Sessions against the clock: 1002 only until a revoked token's natural expiry, and last_active_at kept to a one-minute resolution.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';
import type { Clock } from '../src/contracts/clock.ts';

/**
 * A clock that stands still until a test moves it, forward only within a test. Each test starts it at real
 * time: lucia dates a new session's expiry by the real clock, so a clock left hours ahead would see every new
 * session as already expired.
 */
const clock = { ms: Date.now(), now: (): Date => new Date(clock.ms) } satisfies Clock & { ms: number };
beforeEach(() => {
  clock.ms = Date.now();
});
const advance = (ms: number) => void (clock.ms += ms);
const setClock = (ms: number) => {
  expect(ms).toBeGreaterThanOrEqual(clock.ms);
  clock.ms = ms;
};

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ clock, env: { RATE_LIMITS_ENABLED: 'false' } });
  // Sign-in needs first-run setup done.
  await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

/** When the session's access token expires, as GET /auth/sessions reports it (asked with that token). */
async function expiryOf(user: TestUser): Promise<number> {
  const res = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', headers: user.headers });
  const own = res.json<{ data: { session_id: string; expires_at: string }[] }>().data.find((s) => s.session_id === user.sessionId);
  expect(own).toBeDefined();
  return Date.parse(own?.expires_at ?? '');
}

const codeOf = async (token: string) => {
  const res = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${token}`, ...PROBLEM } });
  return res.statusCode === 200 ? 200 : (res.json().error_code as number);
};

describe('a revoked access token answers 401/1002 only until it would have expired', () => {
  it('logged out: 1002 up to the last millisecond of its lifetime, then 401/1000', async () => {
    const user = await createUser(svc);
    const expiresAt = await expiryOf(user);
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: user.headers })).statusCode).toBe(204);
    expect(await codeOf(user.token)).toBe(1002);

    setClock(expiresAt - 1);
    expect(await codeOf(user.token)).toBe(1002);

    setClock(expiresAt);
    const expired = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { ...user.headers, ...PROBLEM } });
    expect(expired.statusCode).toBe(401);
    expect(expired.json()).toMatchObject({ status: 401, error_code: 1000, error_category: 'auth' });

    advance(24 * 3600 * 1000);
    expect(await codeOf(user.token)).toBe(1000);
  });

  it('revoked through DELETE /auth/sessions/{id}: the same, in the envelope too', async () => {
    const user = await createUser(svc);
    const expiresAt = await expiryOf(user);
    const res = await svc.app.inject({ method: 'DELETE', url: `/api/v1/auth/sessions/${user.sessionId}`, headers: user.headers });
    expect(res.statusCode).toBe(204);
    const before = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers });
    expect(before.json()).toMatchObject({ success: false, error_detail: { error_code: 1002 } });

    setClock(expiresAt);
    const after = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers });
    expect(after.statusCode).toBe(401);
    expect(after.json()).toMatchObject({ success: false, error_detail: { error_code: 1000 } });
  });
});

describe('an access token lives ACCESS_TOKEN_TTL from its issue, however it is used (CONTRACT §3.7)', () => {
  it('used again and again past half its life, it still dies at issue time + ACCESS_TOKEN_TTL (401/1000)', async () => {
    const issuedAt = clock.ms;
    const user = await createUser(svc);
    const ttlMs = svc.deps.config.accessTokenTtl * 1000;
    const expiresAt = await expiryOf(user);
    // Issued now for ACCESS_TOKEN_TTL (lucia dates it by the real clock, a few milliseconds on).
    expect(expiresAt - issuedAt).toBeGreaterThanOrEqual(ttlMs);
    expect(expiresAt - issuedAt).toBeLessThan(ttlMs + 5000);
    for (const fraction of [0.5, 0.6, 0.75, 0.9, 0.99]) {
      setClock(issuedAt + fraction * ttlMs + 1000);
      expect(await codeOf(user.token)).toBe(200);
      expect(await expiryOf(user)).toBe(expiresAt);
    }
    setClock(expiresAt - 1);
    expect(await codeOf(user.token)).toBe(200);
    setClock(expiresAt);
    expect(await codeOf(user.token)).toBe(1000);
  });
});

describe('last_active_at', () => {
  type Listed = { session_id: string; last_active_at: string };

  /** A user with two sessions: `user` is the one used, `watcher` lists both without touching the first. */
  async function twoSessions(): Promise<{ user: TestUser; watch: () => Promise<string> }> {
    const user = await createUser(svc);
    const login = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: user.password } });
    expect(login.statusCode).toBe(200);
    const watcher = { authorization: `Bearer ${login.cookies.find((c) => c.name === 'session')?.value ?? ''}` };
    const watch = async () => {
      const res = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', headers: watcher });
      expect(res.statusCode).toBe(200);
      const listed: Listed[] = res.json().data;
      const own = listed.find((s) => s.session_id === user.sessionId);
      expect(own).toBeDefined();
      return own?.last_active_at ?? '';
    };
    return { user, watch };
  }

  const use = async (user: TestUser) => expect(await codeOf(user.token)).toBe(200);
  const iso = (ms: number) => new Date(ms).toISOString();

  it('starts at the sign-in time', async () => {
    const start = clock.ms;
    const { watch } = await twoSessions();
    expect(await watch()).toBe(iso(start));
  });

  it('is not written by use within a minute of the last write (a minute exactly included)', async () => {
    const start = clock.ms;
    const { user, watch } = await twoSessions();
    for (const step of [1_000, 29_000, 29_000, 1_000]) {
      advance(step);
      await use(user);
      expect(await watch()).toBe(iso(start));
    }
  });

  it('is refreshed by the first use more than a minute after the last write, then again a minute after that', async () => {
    const start = clock.ms;
    const { user, watch } = await twoSessions();
    advance(61_000);
    await use(user);
    const firstWrite = clock.ms;
    expect(firstWrite).toBe(start + 61_000);
    expect(await watch()).toBe(iso(firstWrite));

    advance(30_000);
    await use(user);
    expect(await watch()).toBe(iso(firstWrite));

    advance(31_000);
    await use(user);
    expect(await watch()).toBe(iso(clock.ms));
  });

  it('is not moved by a request that does not use the session', async () => {
    const start = clock.ms;
    const { user, watch } = await twoSessions();
    advance(5 * 60_000);
    // The watcher's own requests and other users' requests leave this session alone.
    await use(await createUser(svc));
    expect(await watch()).toBe(iso(start));
    await use(user);
    expect(await watch()).toBe(iso(clock.ms));
  });
});
