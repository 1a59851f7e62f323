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
    expect(cookies.get('refresh_token')).toEqual({ ...cleared, path: '/api', httponly: true });
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

describe('logout ends the session whatever the browser still holds (CONTRACT §3.3 rev. 2)', () => {
  let nextIp = 1;
  /** A browser sign-in of a new user, each from its own address so the per-IP login window never interferes. */
  async function signIn() {
    const user = await createUser(svc);
    const remoteAddress = `10.7.0.${nextIp++}`;
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress, payload: { username: user.username, password: user.password } });
    expect(res.statusCode).toBe(200);
    return res;
  }
  /**
   * A browser that signed in over an hour ago: its access token has expired (ACCESS_TOKEN_TTL 3600 s), so the
   * browser has dropped the session cookie; the refresh token still has days to live. The row is aged rather
   * than an injected clock moved, because lucia judges an access token's expiry by the real clock.
   */
  async function signedInOverAnHourAgo(): Promise<Record<string, string>> {
    const res = await signIn();
    await svc.db.orm.em
      .fork()
      .getConnection()
      .execute(`update sessions set expires_at = now() - interval '1 second' where id = ?`, [res.json().data.session_id]);
    return Object.fromEntries(res.cookies.map((c) => [c.name, c.value]));
  }
  const refreshStatus = async (url: string, refreshToken: string) => {
    const res = await svc.app.inject({ method: 'POST', url, cookies: { refresh_token: refreshToken }, headers: { ...PROBLEM, 'content-type': 'application/json' }, payload: '{}' });
    return { status: res.statusCode, code: res.statusCode === 200 ? 200 : (res.json().error_code ?? res.json().error?.data?.problem?.error_code) };
  };

  it('sets refresh_token on Path=/api, which covers /api/v1/auth/logout and /api/trpc/auth.refresh and auth.logout', async () => {
    const path = (await signIn()).cookies.find((c) => c.name === 'refresh_token')?.path ?? '';
    expect(path).toBe('/api');
    // RFC 6265 §5.1.4 path-match.
    for (const url of ['/api/v1/auth/refresh', '/api/v1/auth/logout', '/api/trpc/auth.refresh', '/api/trpc/auth.logout']) expect(url.startsWith(`${path}/`)).toBe(true);
  });

  it('over /api/v1: with only the refresh_token cookie (access cookie expired) → 204, and that refresh token then gets 401', async () => {
    const jar = await signedInOverAnHourAgo();
    // The premise: the access token really has expired.
    expect(await codeOf({ cookies: { session: jar.session ?? '' } })).toBe(1000);

    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', cookies: { refresh_token: jar.refresh_token ?? '' } });
    expect(res.statusCode).toBe(204);
    expect(await refreshStatus('/api/v1/auth/refresh', jar.refresh_token ?? '')).toEqual({ status: 401, code: 1002 });
  });

  it('over /api/trpc: auth.logout with only the refresh_token cookie ends the session; auth.refresh then gets 401', async () => {
    const jar = await signedInOverAnHourAgo();
    const res = await svc.app.inject({
      method: 'POST',
      url: '/api/trpc/auth.logout',
      cookies: { refresh_token: jar.refresh_token ?? '' },
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['clear-site-data']).toBe('"cookies"');
    expect(await refreshStatus('/api/trpc/auth.refresh', jar.refresh_token ?? '')).toEqual({ status: 401, code: 1002 });
  });

  it('auth.refresh over /api/trpc works with the refresh_token cookie', async () => {
    const jar = Object.fromEntries((await signIn()).cookies.map((c) => [c.name, c.value]));
    expect(await refreshStatus('/api/trpc/auth.refresh', jar.refresh_token ?? '')).toEqual({ status: 200, code: 200 });
  });

  it('with an expired access cookie still sent along: the access token finds the session', async () => {
    const jar = await signedInOverAnHourAgo();
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', cookies: { session: jar.session ?? '' } })).statusCode).toBe(204);
    expect(await refreshStatus('/api/v1/auth/refresh', jar.refresh_token ?? '')).toEqual({ status: 401, code: 1002 });
  });

  it('with a rotated-away access cookie: the refresh_token cookie still finds the session', async () => {
    const user = await createUser(svc);
    const refreshed = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', cookies: { refresh_token: user.refreshToken } });
    const newRefresh = refreshed.cookies.find((c) => c.name === 'refresh_token')?.value ?? '';
    const newAccess = refreshed.cookies.find((c) => c.name === 'session')?.value ?? '';
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', cookies: { session: user.token, refresh_token: newRefresh } })).statusCode).toBe(204);
    expect(await refreshStatus('/api/v1/auth/refresh', newRefresh)).toEqual({ status: 401, code: 1002 });
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${newAccess}`, ...PROBLEM } })).json().error_code).toBe(1002);
  });

  it('with an already used refresh token: ends its session too (as replaying it at /auth/refresh would)', async () => {
    const user = await createUser(svc);
    const refreshed = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', cookies: { refresh_token: user.refreshToken } });
    const newAccess = refreshed.cookies.find((c) => c.name === 'session')?.value ?? '';
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', cookies: { refresh_token: user.refreshToken } })).statusCode).toBe(204);
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${newAccess}`, ...PROBLEM } })).json().error_code).toBe(1002);
  });

  it('with an unknown refresh_token cookie: 204, and no session of anyone is touched', async () => {
    const user = await createUser(svc);
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', cookies: { refresh_token: 'R'.repeat(43) } })).statusCode).toBe(204);
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers })).statusCode).toBe(200);
  });

  it('a live access token wins: its session ends, not the one of a refresh_token cookie from elsewhere', async () => {
    const mine = await createUser(svc);
    const other = await createUser(svc);
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: mine.headers, cookies: { refresh_token: other.refreshToken } });
    expect(res.statusCode).toBe(204);
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { ...mine.headers, ...PROBLEM } })).json().error_code).toBe(1002);
    expect(await refreshStatus('/api/v1/auth/refresh', other.refreshToken)).toEqual({ status: 200, code: 200 });
  });
});

describe('a cookie logout from another site changes nothing (CONTRACT §3.7)', () => {
  const SELF = 'http://agent-org.test'; // PUBLIC_URL of the test services
  const EVIL = 'https://evil.example';

  /** A cookie logout with these headers; whether it answered 403/1001, and whether the session survived. */
  async function attempt(headers: Record<string, string>, opts: { url?: string; bearer?: boolean } = {}) {
    const user = await createUser(svc);
    const res = await svc.app.inject({
      method: 'POST',
      url: opts.url ?? '/api/v1/auth/logout',
      headers: { ...PROBLEM, 'content-type': 'text/plain', ...(opts.bearer ? user.headers : {}), ...headers },
      ...(opts.bearer ? {} : { cookies: { session: user.token, refresh_token: user.refreshToken, csrf_token: user.csrfToken } }),
      payload: '{}',
    });
    return { res, alive: (await codeOf({ headers: user.headers })) === 200 };
  }

  it.each([
    ['Origin of another site', { origin: EVIL }],
    ['Origin: null (a sandboxed or file page)', { origin: 'null' }],
    ['Origin of the service on another scheme', { origin: 'https://agent-org.test' }],
    ['no Origin but Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Origin of another site, whatever Sec-Fetch-Site says', { origin: EVIL, 'sec-fetch-site': 'same-origin' }],
  ])('%s: 403/1001, the session lives on and no cookie is cleared', async (_label, headers) => {
    const { res, alive } = await attempt(headers);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ status: 403, error_code: 1001 });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers['clear-site-data']).toBeUndefined();
    expect(alive).toBe(true);
  });

  it('over /api/trpc the same', async () => {
    const { res, alive } = await attempt({ origin: EVIL, 'content-type': 'application/json' }, { url: '/api/trpc/auth.logout' });
    expect(res.statusCode).toBe(403);
    expect(alive).toBe(true);
  });

  it('with only the refresh_token cookie the same', async () => {
    const user = await createUser(svc);
    const res = await logout({ headers: { origin: EVIL }, cookies: { refresh_token: user.refreshToken } });
    expect(res.statusCode).toBe(403);
    expect(await codeOf({ headers: user.headers })).toBe(200);
  });

  it.each([
    ['the Origin of PUBLIC_URL', { origin: SELF }],
    ['the Origin the request was sent to (its Host)', { origin: 'http://localhost:80' }],
    ['no Origin and Sec-Fetch-Site: same-origin', { 'sec-fetch-site': 'same-origin' }],
    ['no Origin and Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ['no Origin and no Sec-Fetch-Site (not a browser)', {}],
  ])('%s: 204 and the session ends', async (_label, headers) => {
    const { res, alive } = await attempt(headers);
    expect(res.statusCode).toBe(204);
    expect(alive).toBe(false);
  });

  it('a bearer-only logout is unaffected by Origin', async () => {
    const { res, alive } = await attempt({ origin: EVIL, 'sec-fetch-site': 'cross-site' }, { bearer: true });
    expect(res.statusCode).toBe(204);
    expect(alive).toBe(false);
  });

  it('an origin listed in CORS_ORIGINS may log out', async () => {
    const cors = await startTestService({ env: { RATE_LIMIT_STORE: 'memory', CORS_ORIGINS: 'https://app.example.com' } });
    try {
      const user = await createUser(cors, { role: 'ceo' });
      const res = await cors.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { origin: 'https://app.example.com' }, cookies: { session: user.token } });
      expect(res.statusCode).toBe(204);
      const other = await createUser(cors);
      const refused = await cors.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { origin: EVIL }, cookies: { session: other.token } });
      expect(refused.statusCode).toBe(403);
    } finally {
      await cors.close();
    }
  });
});
