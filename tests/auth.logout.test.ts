// POST /auth/logout: 204 without a body, cookies cleared, the session revoked for cookie and bearer, idempotent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';

const PROBLEM = { accept: 'application/problem+json' };

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMIT_STORE: 'memory' } });
  // Login answers 409 until a CEO exists.
  const setup = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: { username: 'chief', password: 'correct horse battery staple' } });
  expect(setup.statusCode).toBe(201);
});
afterAll(() => svc.close());

const logout = (opts: { headers?: Record<string, string>; cookies?: Record<string, string> } = {}) =>
  svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: opts.headers ?? {}, ...(opts.cookies ? { cookies: opts.cookies } : {}) });

const codeOf = async (opts: { headers?: Record<string, string>; cookies?: Record<string, string> }) => {
  const res = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { ...PROBLEM, ...opts.headers }, ...(opts.cookies ? { cookies: opts.cookies } : {}) });
  return res.statusCode === 200 ? 200 : (res.json().error_code as number);
};

/** Set-Cookie lines by cookie name, attributes in lower case. */
function setCookies(raw: string | string[] | number | undefined): Map<string, Record<string, string | true>> {
  const lines = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  const out = new Map<string, Record<string, string | true>>();
  for (const line of lines) {
    const [pair = '', ...parts] = line.split(';').map((s) => s.trim());
    const attrs: Record<string, string | true> = { value: pair.slice(pair.indexOf('=') + 1) };
    for (const part of parts) {
      const eq = part.indexOf('=');
      attrs[(eq < 0 ? part : part.slice(0, eq)).toLowerCase()] = eq < 0 ? true : part.slice(eq + 1);
    }
    out.set(pair.slice(0, pair.indexOf('=')), attrs);
  }
  return out;
}

describe('POST /auth/logout', () => {
  it('answers 204 with no body and no Content-Type', async () => {
    const user = await createUser(svc);
    const res = await logout({ cookies: { session: user.token } });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['content-type']).toBeUndefined();
    expect(res.headers['content-length'] ?? '0').toBe('0');
  });

  it('clears all three cookies (empty, Max-Age=0, the same paths and attributes) and sends Clear-Site-Data', async () => {
    const user = await createUser(svc);
    const res = await logout({ cookies: { session: user.token } });
    expect(res.headers['clear-site-data']).toBe('"cookies"');
    const cookies = setCookies(res.headers['set-cookie']);
    expect([...cookies.keys()].sort()).toEqual(['csrf_token', 'refresh_token', 'session']);
    const cleared = { value: '', 'max-age': '0', samesite: 'Strict', secure: true };
    expect(cookies.get('session')).toEqual({ ...cleared, path: '/api', httponly: true });
    expect(cookies.get('csrf_token')).toEqual({ ...cleared, path: '/' });
    expect(cookies.get('refresh_token')).toEqual({ ...cleared, path: '/api/v1/auth/refresh', httponly: true });
  });

  it('by cookie: afterwards both cookie and bearer use of that session are 401/1002', async () => {
    const user = await createUser(svc);
    expect((await logout({ cookies: { session: user.token } })).statusCode).toBe(204);
    expect(await codeOf({ cookies: { session: user.token } })).toBe(1002);
    expect(await codeOf({ headers: user.headers })).toBe(1002);
  });

  it('by bearer: afterwards both bearer and cookie use of that session are 401/1002', async () => {
    const user = await createUser(svc);
    expect((await logout({ headers: user.headers })).statusCode).toBe(204);
    expect(await codeOf({ headers: user.headers })).toBe(1002);
    expect(await codeOf({ cookies: { session: user.token } })).toBe(1002);
  });

  it('the revoked token gets 1002 in the envelope too', async () => {
    const user = await createUser(svc);
    await logout({ headers: user.headers });
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ success: false, error: 'session logged out or force-revoked', error_detail: { error_code: 1002, error_category: 'auth' } });
  });

  it('revokes only the current session, not the user\'s others', async () => {
    const user = await createUser(svc);
    const other = await user.caller.auth.login({ username: user.username, password: user.password });
    await logout({ headers: user.headers });
    await expect(svc.caller({ bearerToken: user.token }).auth.me()).rejects.toMatchObject({ errorCode: 1002 });
    const row = await svc.db.orm.em
      .fork()
      .getConnection()
      .execute<{ revoked_at: Date | null }[]>('select revoked_at from sessions where id = ?', [other.session_id]);
    expect(row[0]?.revoked_at).toBeNull();
  });

  it('needs no CSRF header and works for a user who must change the password', async () => {
    const user = await createUser(svc, { mustChangePassword: true });
    const res = await logout({ cookies: { session: user.token } });
    expect(res.statusCode).toBe(204);
    expect(await codeOf({ headers: user.headers })).toBe(1002);
  });
});

describe('logout is idempotent', () => {
  it('without any token: 204 and the cookies are still cleared', async () => {
    const res = await logout();
    expect(res.statusCode).toBe(204);
    expect(res.headers['clear-site-data']).toBe('"cookies"');
    expect(setCookies(res.headers['set-cookie']).size).toBe(3);
  });

  it('twice with the same token: 204 both times', async () => {
    const user = await createUser(svc);
    expect((await logout({ headers: user.headers })).statusCode).toBe(204);
    expect((await logout({ headers: user.headers })).statusCode).toBe(204);
  });

  it('with a stale (rotated) token: 204', async () => {
    const user = await createUser(svc);
    await svc.caller({ refreshToken: user.refreshToken }).auth.refresh();
    expect((await logout({ headers: user.headers })).statusCode).toBe(204);
  });

  it.each([
    ['an unknown token', { authorization: `Bearer ${'G'.repeat(43)}` }],
    ['a garbage bearer header', { authorization: 'Bearer  \u00ff garbage' }],
    ['another scheme', { authorization: 'Basic abc' }],
  ])('with %s: 204', async (_name, headers) => {
    expect((await logout({ headers })).statusCode).toBe(204);
  });

  it('with a garbage cookie: 204', async () => {
    expect((await logout({ cookies: { session: 'x'.repeat(9000) } })).statusCode).toBe(204);
  });

  it('with an expired access token: 204, and the session can no longer be refreshed', async () => {
    const user = await createUser(svc);
    await svc.db.orm.em.fork().getConnection().execute(`update sessions set expires_at = now() - interval '1 second' where id = ?`, [user.sessionId]);
    expect((await logout({ headers: user.headers })).statusCode).toBe(204);
    await expect(svc.caller({ refreshToken: user.refreshToken }).auth.refresh()).rejects.toMatchObject({ errorCode: 1002 });
  });
});
