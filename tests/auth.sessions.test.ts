// GET /auth/sessions and DELETE /auth/sessions/{id}: own and (for the CEO) everyone's; the per-user cap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CEO, PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';


type Session = { session_id: string; user_id: string; username: string; is_current: boolean; created_at: string };

async function setupCeo(svc: TestService): Promise<{ headers: { authorization: string }; sessionId: string }> {
  const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: CEO });
  expect(res.statusCode).toBe(201);
  const token = res.cookies.find((c) => c.name === 'session')?.value ?? '';
  return { headers: { authorization: `Bearer ${token}` }, sessionId: res.json().data.session_id };
}

const codeOf = async (svc: TestService, token: string) => {
  const res = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${token}`, ...PROBLEM } });
  return res.statusCode === 200 ? 200 : (res.json().error_code as number);
};

describe('sessions', () => {
  let svc: TestService;
  let ceo: Awaited<ReturnType<typeof setupCeo>>;
  beforeAll(async () => {
    svc = await startTestService({ env: { RATE_LIMIT_STORE: 'memory', RATE_LIMITS_ENABLED: 'false' } });
    ceo = await setupCeo(svc);
  });
  afterAll(() => svc.close());

  const list = (headers: Record<string, string>, query = '') => svc.app.inject({ method: 'GET', url: `/api/v1/auth/sessions${query}`, headers });
  const revoke = (headers: Record<string, string>, id: string) => svc.app.inject({ method: 'DELETE', url: `/api/v1/auth/sessions/${id}`, headers });

  describe('GET /auth/sessions', () => {
    let user: TestUser;
    let second: { session_id: string };
    beforeAll(async () => {
      user = await createUser(svc, { role: 'manager' });
      second = await user.caller.auth.login({ username: user.username, password: user.password });
    });

    it('lists the caller\'s live sessions as a plain list, newest first, with is_current', async () => {
      const res = await list(user.headers);
      expect(res.statusCode).toBe(200);
      expect(res.json()).not.toHaveProperty('pagination');
      const sessions: Session[] = res.json().data;
      expect(sessions.map((s) => s.session_id)).toEqual([second.session_id, user.sessionId]);
      expect(sessions.map((s) => s.is_current)).toEqual([false, true]);
      expect(sessions[1]).toEqual({
        session_id: user.sessionId,
        user_id: user.id,
        username: user.username,
        ip_address: '127.0.0.1',
        user_agent: 'vitest',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        last_active_at: expect.stringMatching(/\.\d{3}Z$/),
        expires_at: expect.stringMatching(/\.\d{3}Z$/),
        is_current: true,
      });
    });

    it('scope=own is the default', async () => {
      expect((await list(user.headers, '?scope=own')).json().data).toEqual((await list(user.headers)).json().data);
    });

    it('never shows revoked sessions', async () => {
      const other = await createUser(svc);
      const extra = await other.caller.auth.login({ username: other.username, password: other.password });
      await other.caller.auth.revokeSession({ session_id: extra.session_id });
      const ids = (await other.caller.auth.listSessions({})).map((s) => s.session_id);
      expect(ids).toEqual([other.sessionId]);
    });

    it('never shows sessions that can no longer be refreshed', async () => {
      const other = await createUser(svc);
      await svc.db.orm.em.fork().getConnection().execute(`update sessions set refresh_expires_at = now() - interval '1 second' where id = ?`, [other.sessionId]);
      // Its access token still works for now (only the refresh window closed), yet the session is not listed as live.
      const listed: Session[] = (await svc.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', headers: other.headers })).json().data;
      expect(listed).toEqual([]);
    });

    it('scope=all is CEO-only: others get 403/1001, in both formats', async () => {
      const envelope = await list(user.headers, '?scope=all');
      expect(envelope.statusCode).toBe(403);
      expect(envelope.json()).toMatchObject({ success: false, error_detail: { error_code: 1001 } });
      const problem = await list({ ...user.headers, ...PROBLEM }, '?scope=all');
      expect(problem.json()).toMatchObject({ status: 403, error_code: 1001 });
    });

    it('scope=all shows the CEO everyone\'s sessions, is_current only on the CEO\'s own', async () => {
      const sessions: Session[] = (await list(ceo.headers, '?scope=all')).json().data;
      const ids = sessions.map((s) => s.session_id);
      expect(ids).toEqual(expect.arrayContaining([ceo.sessionId, user.sessionId, second.session_id]));
      expect(sessions.filter((s) => s.is_current).map((s) => s.session_id)).toEqual([ceo.sessionId]);
      expect(sessions.find((s) => s.session_id === user.sessionId)?.username).toBe(user.username);
      const created = sessions.map((s) => s.created_at);
      expect(created).toEqual([...created].sort().reverse());
    });

    it('an unknown scope is 400/2001', async () => {
      const res = await list({ ...ceo.headers, ...PROBLEM }, '?scope=everyone');
      expect(res.json()).toMatchObject({ status: 400, error_code: 2001 });
    });

    it('without credentials is 401/1000', async () => {
      const res = await list(PROBLEM);
      expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
    });
  });

  describe('DELETE /auth/sessions/{session_id}', () => {
    it('own session: 204 with no body, and its token then answers 401/1002', async () => {
      const user = await createUser(svc);
      const res = await revoke(user.headers, user.sessionId);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect(res.headers['content-type']).toBeUndefined();
      expect(await codeOf(svc, user.token)).toBe(1002);
    });

    it('another own session: 204, the caller\'s session stays', async () => {
      const user = await createUser(svc);
      const other = await user.caller.auth.login({ username: user.username, password: user.password });
      expect((await revoke(user.headers, other.session_id)).statusCode).toBe(204);
      expect(await codeOf(svc, user.token)).toBe(200);
    });

    it('someone else\'s session: 404/3000 for a non-CEO (no enumeration), and it stays live', async () => {
      const [alice, bob] = await Promise.all([createUser(svc, { role: 'manager' }), createUser(svc)]);
      const res = await revoke({ ...alice.headers, ...PROBLEM }, bob.sessionId);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ status: 404, error_code: 3000, error_category: 'not_found' });
      expect(await codeOf(svc, bob.token)).toBe(200);
      // Indistinguishable from an id that does not exist.
      const unknown = await revoke({ ...alice.headers, ...PROBLEM }, 'no-such-session');
      expect({ ...unknown.json(), instance: null }).toEqual({ ...res.json(), instance: null });
    });

    it('someone else\'s session: 204 for the CEO, and its token then answers 401/1002', async () => {
      const bob = await createUser(svc);
      expect((await revoke(ceo.headers, bob.sessionId)).statusCode).toBe(204);
      expect(await codeOf(svc, bob.token)).toBe(1002);
    });

    it('an unknown id is 404/3000 (envelope too)', async () => {
      const res = await revoke(ceo.headers, 'no-such-session');
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ success: false, error_detail: { error_code: 3000 } });
    });

    it('an already revoked session is 404/3000', async () => {
      const user = await createUser(svc);
      const other = await user.caller.auth.login({ username: user.username, password: user.password });
      expect((await revoke(user.headers, other.session_id)).statusCode).toBe(204);
      expect((await revoke({ ...user.headers, ...PROBLEM }, other.session_id)).json()).toMatchObject({ error_code: 3000 });
    });

    it('a 129-character id is 400/2001; 128 characters is a plain 404', async () => {
      const long = await revoke({ ...ceo.headers, ...PROBLEM }, 'a'.repeat(129));
      expect(long.json()).toMatchObject({ status: 400, error_code: 2001 });
      expect(long.json().detail).toMatch(/session_id/);
      expect((await revoke({ ...ceo.headers, ...PROBLEM }, 'a'.repeat(128))).json()).toMatchObject({ error_code: 3000 });
    });

    it('without credentials is 401/1000', async () => {
      const res = await revoke(PROBLEM, 'whatever');
      expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
    });
  });
});

describe('the per-user session cap (MAX_SESSIONS_PER_USER=2)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { RATE_LIMIT_STORE: 'memory', RATE_LIMITS_ENABLED: 'false', MAX_SESSIONS_PER_USER: '2' } });
    await setupCeo(svc);
  });
  afterAll(() => svc.close());

  const liveSessions = async (userId: string) => {
    const rows = await svc.db.orm.em
      .fork()
      .getConnection()
      .execute<{ id: string; revoked_reason: string | null }[]>('select id, revoked_reason from sessions where user_id = ? order by created_at', [userId]);
    return rows;
  };

  it('a third login evicts the oldest session, whose token then answers 401/1002', async () => {
    const user = await createUser(svc);
    const login = () =>
      svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: user.password } });
    const second = await login();
    const third = await login();
    expect(third.statusCode).toBe(200);
    expect(await codeOf(svc, user.token)).toBe(1002);
    for (const res of [second, third]) expect(await codeOf(svc, res.cookies.find((c) => c.name === 'session')?.value ?? '')).toBe(200);
    const rows = await liveSessions(user.id);
    expect(rows.map((r) => r.revoked_reason)).toEqual(['evicted', null, null]);
  });

  it('concurrent logins never leave more than the cap live', async () => {
    const user = await createUser(svc);
    await Promise.all(
      Array.from({ length: 6 }, (_, i) => svc.caller(undefined, { ip: `10.7.0.${i + 1}` }).auth.login({ username: user.username, password: user.password })),
    );
    const rows = await liveSessions(user.id);
    expect(rows).toHaveLength(7);
    expect(rows.filter((r) => r.revoked_reason === null)).toHaveLength(2);
  });
});
