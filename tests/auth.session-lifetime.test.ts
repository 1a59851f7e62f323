// Session bookkeeping on the request path: last_active_at at most once a minute, 1002 only until a revoked token's own expiry, a replay ends one session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';
import type { Clock } from '../src/contracts/clock.ts';

// Real time plus an offset the tests move; lucia judges a live token's expiry by the system clock, the service by this one.
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
const later = (seconds: number) => void (offsetMs += seconds * 1000);

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' }, clock });
});
afterAll(() => svc.close());

const codeOf = async (accessToken: string): Promise<number> => {
  const res = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${accessToken}`, accept: 'application/problem+json' } });
  return res.statusCode === 200 ? 200 : (res.json().error_code as number);
};

const sessionRow = (sessionId: string) =>
  kysely(svc.deps.orm.em.fork()).selectFrom('sessions').select(['lastActiveAt', 'expiresAt']).where('id', '=', sessionId).executeTakeFirstOrThrow();

describe('last_active_at', () => {
  it('is written at most once a minute: not by requests within a minute of the stored value, then at the first one after', async () => {
    const user = await createUser(svc);
    const issuedAt = (await sessionRow(user.sessionId)).lastActiveAt;
    later(30);
    expect(await codeOf(user.token)).toBe(200);
    expect((await sessionRow(user.sessionId)).lastActiveAt).toEqual(issuedAt);

    later(31);
    const at = clock.now().getTime();
    expect(await codeOf(user.token)).toBe(200);
    const moved = (await sessionRow(user.sessionId)).lastActiveAt;
    expect(moved.getTime()).toBeGreaterThanOrEqual(at);

    later(30);
    expect(await codeOf(user.token)).toBe(200);
    expect((await sessionRow(user.sessionId)).lastActiveAt).toEqual(moved);
  });
});

describe('a revoked access token', () => {
  it('answers 1002 until the moment it would have expired, and 1000 from then on', async () => {
    const user = await createUser(svc);
    await user.caller.auth.revokeSession({ session_id: user.sessionId });
    const { expiresAt } = await sessionRow(user.sessionId);
    const before = offsetMs;
    try {
      offsetMs = expiresAt.getTime() - Date.now() - 5_000;
      expect(await codeOf(user.token)).toBe(1002);
      offsetMs = expiresAt.getTime() - Date.now() + 1_000;
      expect(await codeOf(user.token)).toBe(1000);
    } finally {
      offsetMs = before;
    }
  });
});

describe('a replayed refresh token', () => {
  it("revokes its own session only: the same user's other session keeps working", async () => {
    const user = await createUser(svc);
    const other = await svc.deps.orm.em
      .fork()
      .transactional((tx) => issueSession({ em: tx, clock, config: svc.deps.config }, user.id, { ip: '127.0.0.1', userAgent: 'second device' }));
    const refresh = () => svc.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', cookies: { refresh_token: user.refreshToken } });
    expect((await refresh()).statusCode).toBe(200);
    expect((await refresh()).json().error_detail.error_code).toBe(1002);
    expect(await codeOf(other.accessToken)).toBe(200);
  });
});
