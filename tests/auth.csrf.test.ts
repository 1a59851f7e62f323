// CSRF double submit: cookie-authenticated unsafe requests need X-CSRF-Token equal to the csrf_token cookie.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CEO, PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';


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
