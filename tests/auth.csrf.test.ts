// CSRF double submit: cookie-authenticated unsafe requests need X-CSRF-Token equal to the csrf_token cookie, which the server issued for that session.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CEO, PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

// Many sign-ins from one address; the per-operation login window is not what these tests are about.
const ENV = { RATE_LIMIT_STORE: 'memory', RATE_LIMITS_ENABLED: 'false' };

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: ENV });
  // The CEO every browser-like sign-in uses; each test signs in afresh.
  await createUser(svc, { role: 'ceo', ...CEO });
});
afterAll(() => svc.close());

type Jar = Record<string, string>;
const jarOf = (res: { cookies: { name: string; value: string }[] }): Jar => Object.fromEntries(res.cookies.map((c) => [c.name, c.value]));

/** A browser-like sign-in: the three cookies of a fresh login. */
async function browserLogin(): Promise<Jar> {
  const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: CEO });
  expect(res.statusCode).toBe(200);
  return jarOf(res);
}

describe('POST /auth/setup', () => {
  it('is exempt: cookies without X-CSRF-Token still set up the CEO', async () => {
    // Setup needs a database without users, so this test has its own.
    const fresh = await startTestService({ env: ENV });
    try {
      const res = await fresh.app.inject({
        method: 'POST',
        url: '/api/v1/auth/setup',
        payload: CEO,
        cookies: { session: 'S'.repeat(43), csrf_token: 'C'.repeat(43) },
      });
      expect(res.statusCode).toBe(201);
    } finally {
      await fresh.close();
    }
  });
});

describe('cookie-authenticated POST (POST /auth/ws-ticket)', () => {
  let jar: Jar;
  beforeAll(async () => {
    jar = await browserLogin();
  });
  const post = (headers: Record<string, string>, cookies: Jar = jar) => svc.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', cookies, headers });

  it('without X-CSRF-Token is 403/1001, in both formats', async () => {
    const envelope = await post({});
    expect(envelope.statusCode).toBe(403);
    expect(envelope.json()).toMatchObject({ success: false, error: 'missing or invalid CSRF token', error_detail: { error_code: 1001, error_category: 'auth' } });
    const problem = await post(PROBLEM);
    expect(problem.statusCode).toBe(403);
    expect(problem.headers['content-type']).toBe('application/problem+json');
    expect(problem.json()).toMatchObject({ status: 403, error_code: 1001 });
  });

  it('with a mismatched X-CSRF-Token is 403/1001', async () => {
    const res = await post({ ...PROBLEM, 'x-csrf-token': `${jar.csrf_token ?? ''}x` });
    expect(res.json()).toMatchObject({ status: 403, error_code: 1001 });
  });

  it('with the header but no csrf_token cookie is 403/1001', async () => {
    const { csrf_token: csrf = '', ...withoutCsrf } = jar;
    const res = await post({ ...PROBLEM, 'x-csrf-token': csrf }, withoutCsrf);
    expect(res.json()).toMatchObject({ status: 403, error_code: 1001 });
  });

  it('with an empty header and an empty cookie is 403/1001', async () => {
    const res = await post({ ...PROBLEM, 'x-csrf-token': '' }, { ...jar, csrf_token: '' });
    expect(res.json()).toMatchObject({ status: 403, error_code: 1001 });
  });

  it('with the matching X-CSRF-Token is allowed', async () => {
    const res = await post({ 'x-csrf-token': jar.csrf_token ?? '' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.expires_in).toBe(30);
  });
});

describe('cookie-authenticated DELETE (DELETE /auth/sessions/{id})', () => {
  it('without X-CSRF-Token is 403/1001 and revokes nothing; with it, 204', async () => {
    const victim = await browserLogin();
    const sessions: { session_id: string; is_current: boolean }[] = (await svc.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', cookies: victim })).json().data;
    const sessionId = sessions.find((s) => s.is_current)?.session_id ?? '';
    const url = `/api/v1/auth/sessions/${sessionId}`;
    const refused = await svc.app.inject({ method: 'DELETE', url, cookies: victim, headers: PROBLEM });
    expect(refused.json()).toMatchObject({ status: 403, error_code: 1001 });
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', cookies: victim })).statusCode).toBe(200);

    const allowed = await svc.app.inject({ method: 'DELETE', url, cookies: victim, headers: { 'x-csrf-token': victim.csrf_token ?? '' } });
    expect(allowed.statusCode).toBe(204);
  });
});

describe('cookie-authenticated POST /auth/change-password', () => {
  it('without X-CSRF-Token is 403/1001 before the password is even looked at', async () => {
    const jar = await browserLogin();
    const res = await svc.app.inject({
      method: 'POST',
      url: '/api/v1/auth/change-password',
      cookies: jar,
      headers: PROBLEM,
      payload: { current_password: 'wrong', new_password: 'a brand new password' },
    });
    expect(res.json()).toMatchObject({ status: 403, error_code: 1001 });
  });
});

describe('bearer requests', () => {
  it('are exempt: POST without X-CSRF-Token is allowed', async () => {
    const user = await createUser(svc, { role: 'manager' });
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: user.headers });
    expect(res.statusCode).toBe(200);
  });

  it('are exempt even when a stale cookie is also sent (the bearer authenticated the request)', async () => {
    const user = await createUser(svc, { role: 'manager' });
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: user.headers, cookies: { session: 'S'.repeat(43) } });
    expect(res.statusCode).toBe(200);
  });

  it('do not exempt a request whose valid cookie authenticated it', async () => {
    const jar = await browserLogin();
    const user = await createUser(svc, { role: 'manager' });
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: { ...user.headers, ...PROBLEM }, cookies: jar });
    expect(res.json()).toMatchObject({ status: 403, error_code: 1001 });
  });
});

describe('exempt operations', () => {
  it('POST /auth/login with cookies and no header signs in', async () => {
    const jar = await browserLogin();
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: CEO, cookies: jar });
    expect(res.statusCode).toBe(200);
  });

  it('POST /auth/refresh with cookies and no header rotates', async () => {
    const jar = await browserLogin();
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', cookies: jar });
    expect(res.statusCode).toBe(200);
  });

  it('POST /auth/logout with cookies and no header logs out', async () => {
    const jar = await browserLogin();
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', cookies: jar });
    expect(res.statusCode).toBe(204);
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', cookies: jar, headers: PROBLEM })).json()).toMatchObject({ error_code: 1002 });
  });
});

describe('GET requests', () => {
  it('never need the header', async () => {
    const jar = await browserLogin();
    const { csrf_token: _csrf, ...withoutCsrf } = jar;
    for (const url of ['/api/v1/auth/me', '/api/v1/auth/sessions', '/api/v1/capabilities']) {
      const res = await svc.app.inject({ method: 'GET', url, cookies: withoutCsrf });
      expect(res.statusCode).toBe(200);
    }
  });
});

describe('the CSRF token is bound to its session (CONTRACT §3.2 rev. 2)', () => {
  let nextIp = 1;
  /** A browser sign-in of a new manager (own address: the login window is not what these tests are about). */
  async function signIn(user?: TestUser): Promise<{ user: TestUser; jar: Jar }> {
    const who = user ?? (await createUser(svc, { role: 'manager' }));
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress: `10.8.0.${nextIp++}`, payload: { username: who.username, password: who.password } });
    expect(res.statusCode).toBe(200);
    return { user: who, jar: jarOf(res) };
  }
  /** A cookie-authenticated POST with `csrf` as both the csrf_token cookie and the X-CSRF-Token header (they agree). */
  const postWith = (jar: Jar, csrf: string) =>
    svc.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', cookies: { session: jar.session ?? '', csrf_token: csrf }, headers: { ...PROBLEM, 'x-csrf-token': csrf } });

  it('an equal header and cookie the server did not issue are 403/1001, however they look', async () => {
    const { jar } = await signIn();
    for (const forged of ['a', 'A'.repeat(43), randomBytes(32).toString('base64url')]) {
      const res = await postWith(jar, forged);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ status: 403, error_code: 1001 });
    }
    expect((await postWith(jar, jar.csrf_token ?? '')).statusCode).toBe(200);
  });

  it('the csrf token of another user\'s session is 403/1001', async () => {
    const mine = await signIn();
    const theirs = await signIn();
    expect((await postWith(mine.jar, theirs.jar.csrf_token ?? '')).json()).toMatchObject({ status: 403, error_code: 1001 });
  });

  it('the csrf token of the same user\'s other session is 403/1001', async () => {
    const first = await signIn();
    const second = await signIn(first.user);
    expect((await postWith(first.jar, second.jar.csrf_token ?? '')).json()).toMatchObject({ status: 403, error_code: 1001 });
    expect((await postWith(second.jar, first.jar.csrf_token ?? '')).json()).toMatchObject({ status: 403, error_code: 1001 });
  });

  it('after a refresh the new csrf token works and the old one no longer does (it was bound to the old access token)', async () => {
    const { jar } = await signIn();
    const refreshed = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', cookies: { refresh_token: jar.refresh_token ?? '' } });
    expect(refreshed.statusCode).toBe(200);
    const fresh = jarOf(refreshed);
    expect(fresh.csrf_token).not.toBe(jar.csrf_token);
    expect((await postWith(fresh, jar.csrf_token ?? '')).json()).toMatchObject({ status: 403, error_code: 1001 });
    expect((await postWith(fresh, fresh.csrf_token ?? '')).statusCode).toBe(200);
  });

  it('after a password change the new csrf token works and the old one no longer does', async () => {
    const { user, jar } = await signIn();
    const changed = await svc.app.inject({
      method: 'POST',
      url: '/api/v1/auth/change-password',
      cookies: jar,
      headers: { 'x-csrf-token': jar.csrf_token ?? '' },
      payload: { current_password: user.password, new_password: 'a brand new password' },
    });
    expect(changed.statusCode).toBe(200);
    const fresh = jarOf(changed);
    expect((await postWith(fresh, jar.csrf_token ?? '')).json()).toMatchObject({ status: 403, error_code: 1001 });
    expect((await postWith(fresh, fresh.csrf_token ?? '')).statusCode).toBe(200);
  });

  it('the same holds over /api/trpc: a forged equal pair is 403/1001, the issued token passes', async () => {
    const { jar } = await signIn();
    const trpcPost = (csrf: string) =>
      svc.app.inject({
        method: 'POST',
        url: '/api/trpc/auth.wsTicket',
        cookies: { session: jar.session ?? '', csrf_token: csrf },
        headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
        payload: '{}',
      });
    const forged = await trpcPost('A'.repeat(43));
    expect(forged.statusCode).toBe(403);
    expect(forged.json()).toMatchObject({ error: { data: { problem: { status: 403, error_code: 1001 } } } });
    expect((await trpcPost(jar.csrf_token ?? '')).statusCode).toBe(200);
  });

  it('createCaller honours the same binding (a session issued outside HTTP gets its token too)', async () => {
    const user = await createUser(svc, { role: 'manager' });
    const caller = (csrf: string) => svc.caller({ cookieToken: user.token, csrfCookie: csrf, csrfHeader: csrf });
    await expect(caller('A'.repeat(43)).auth.wsTicket()).rejects.toMatchObject({ errorCode: 1001 });
    await expect(caller(user.csrfToken).auth.wsTicket()).resolves.toMatchObject({ expires_in: 30 });
  });
});
