// POST /auth/change-password and the must-change-password gate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const PROBLEM = { accept: 'application/problem+json' };
const NEW_PASSWORD = 'a completely new passphrase';

let svc: TestService;
beforeAll(async () => {
  // Several password changes and logins per test; the per-operation windows are the limiter's tests.
  svc = await startTestService({ env: { RATE_LIMIT_STORE: 'memory', RATE_LIMITS_ENABLED: 'false' } });
  const setup = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: { username: 'chief', password: 'correct horse battery staple' } });
  expect(setup.statusCode).toBe(201);
});
afterAll(() => svc.close());

const change = (user: { token: string }, payload: Record<string, string>, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'POST', url: '/api/v1/auth/change-password', headers: { authorization: `Bearer ${user.token}`, ...headers }, payload });

const codeOf = async (token: string, url = '/api/v1/auth/me', method: 'GET' | 'POST' = 'GET') => {
  const res = await svc.app.inject({ method, url, headers: { authorization: `Bearer ${token}`, ...PROBLEM } });
  return res.statusCode < 300 ? res.statusCode : (res.json().error_code as number);
};

const login = (username: string, password: string) => svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });

const sessionCookie = (res: { cookies: { name: string; value: string }[] }) => res.cookies.find((c) => c.name === 'session')?.value ?? '';

describe('POST /auth/change-password: refusals', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await createUser(svc, { role: 'manager', username: 'long.enough.name' });
  });

  it('a wrong current password is 400/2000 "current password is incorrect" (not 401), in both formats', async () => {
    const problem = await change(user, { current_password: 'not my password', new_password: NEW_PASSWORD }, PROBLEM);
    expect(problem.statusCode).toBe(400);
    expect(problem.json()).toMatchObject({ status: 400, error_code: 2000, detail: 'current password is incorrect' });
    const envelope = await change(user, { current_password: 'not my password', new_password: NEW_PASSWORD });
    expect(envelope.json()).toMatchObject({ success: false, error: 'current password is incorrect', error_detail: { error_code: 2000 } });
    expect(await codeOf(user.token)).toBe(200);
  });

  it('a new password equal to the current one is 400/2000', async () => {
    const res = await change(user, { current_password: user.password, new_password: user.password }, PROBLEM);
    expect(res.json()).toMatchObject({ status: 400, error_code: 2000 });
  });

  it.each([
    ['11 characters', 'a'.repeat(11), 2001],
    ['129 characters', 'a'.repeat(129), 2001],
    ['only whitespace', ' '.repeat(14), 2000],
    ['the username in another case', 'LONG.ENOUGH.NAME', 2000],
  ])('a new password of %s is refused (%i)', async (_name, newPassword, code) => {
    const res = await change(user, { current_password: user.password, new_password: newPassword }, PROBLEM);
    expect(res.json()).toMatchObject({ status: 400, error_code: code });
  });

  it('unknown fields are 400/2001', async () => {
    const res = await change(user, { current_password: user.password, new_password: NEW_PASSWORD, username: 'x' }, PROBLEM);
    expect(res.json()).toMatchObject({ status: 400, error_code: 2001 });
  });

  it('without credentials is 401/1000', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/change-password', headers: PROBLEM, payload: { current_password: 'x', new_password: NEW_PASSWORD } });
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
  });

  it('none of the refusals changed the password', async () => {
    const own = await createUser(svc, { role: 'manager' });
    const refused: Record<string, string>[] = [
      { current_password: 'not my password', new_password: NEW_PASSWORD },
      { current_password: own.password, new_password: 'a'.repeat(11) },
      { current_password: own.password, new_password: NEW_PASSWORD, username: 'x' },
    ];
    for (const payload of refused) {
      expect((await change(own, payload)).statusCode).toBe(400);
    }
    expect((await login(own.username, own.password)).statusCode).toBe(200);
    expect((await login(own.username, NEW_PASSWORD)).statusCode).toBe(401);
  });
});

describe('POST /auth/change-password: success', () => {
  let user: TestUser;
  let otherDevice: { access: string; refresh: string };
  let res: Awaited<ReturnType<typeof change>>;
  beforeAll(async () => {
    user = await createUser(svc, { role: 'manager' });
    const other = await login(user.username, user.password);
    otherDevice = { access: sessionCookie(other), refresh: other.cookies.find((c) => c.name === 'refresh_token')?.value ?? '' };
    res = await change(user, { current_password: user.password, new_password: NEW_PASSWORD });
  });

  it('answers 200 with the UserInfoResponse, must_change_password false', () => {
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id: user.id, username: user.username, role: 'manager', kind: 'human', must_change_password: false, mfa_enabled: false, org_roles: [], scoped_departments: [] });
  });

  it('sets new cookies for the current session (rotated)', async () => {
    expect(res.cookies.map((c) => c.name).sort()).toEqual(['csrf_token', 'refresh_token', 'session']);
    const token = sessionCookie(res);
    expect(token).not.toBe(user.token);
    expect(await codeOf(token)).toBe(200);
    const sessions = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', headers: { authorization: `Bearer ${token}` } });
    const listed: { session_id: string }[] = sessions.json().data;
    expect(listed.map((s) => s.session_id)).toEqual([user.sessionId]);
  });

  it('the previous access token of the current session no longer works', async () => {
    expect(await codeOf(user.token)).toBe(1000);
  });

  it('the previous refresh token of the current session no longer works', async () => {
    await expect(svc.caller({ refreshToken: user.refreshToken }).auth.refresh()).rejects.toMatchObject({ errorCode: 1000 });
  });

  it('every other session of the user answers 401/1002, access and refresh alike', async () => {
    expect(await codeOf(otherDevice.access)).toBe(1002);
    await expect(svc.caller({ refreshToken: otherDevice.refresh }).auth.refresh()).rejects.toMatchObject({ errorCode: 1002 });
  });

  it('other users\' sessions are untouched', async () => {
    const changer = await createUser(svc, { role: 'manager' });
    const bystander = await createUser(svc);
    expect((await change(changer, { current_password: changer.password, new_password: NEW_PASSWORD })).statusCode).toBe(200);
    expect(await codeOf(bystander.token)).toBe(200);
  });

  it('login works with the new password only', async () => {
    // Its own user: a login adds a session, which the shared user's session list must not see.
    const changer = await createUser(svc, { role: 'manager' });
    expect((await change(changer, { current_password: changer.password, new_password: NEW_PASSWORD })).statusCode).toBe(200);
    const old = await login(changer.username, changer.password);
    expect(old.statusCode).toBe(401);
    expect((await login(changer.username, NEW_PASSWORD)).statusCode).toBe(200);
  });
});

describe('must_change_password', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await createUser(svc, { role: 'manager', mustChangePassword: true });
  });

  it.each([
    ['GET', '/api/v1/capabilities'],
    ['POST', '/api/v1/auth/ws-ticket'],
    ['GET', '/api/v1/auth/sessions'],
    ['DELETE', '/api/v1/auth/sessions/whatever'],
    ['GET', '/api/v1/users'],
  ] as const)('%s %s is 403/1001 "password change required"', async (method, url) => {
    const res = await svc.app.inject({ method, url, headers: { ...user.headers, ...PROBLEM } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ status: 403, error_code: 1001, detail: 'password change required' });
  });

  it('the refusal comes in the envelope by default', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: user.headers });
    expect(res.json()).toMatchObject({ success: false, error: 'password change required', error_detail: { error_code: 1001 } });
  });

  it('GET /auth/me works and reports the flag', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.must_change_password).toBe(true);
  });

  it('POST /auth/logout works', async () => {
    const other = await login(user.username, user.password);
    expect(other.json().data.must_change_password).toBe(true);
    expect(await codeOf(sessionCookie(other), '/api/v1/auth/logout', 'POST')).toBe(204);
    expect(await codeOf(sessionCookie(other))).toBe(1002);
  });

  it('POST /auth/change-password works and lifts the gate at once', async () => {
    // Its own user: the other tests need the gate still closed.
    const user = await createUser(svc, { role: 'manager', mustChangePassword: true });
    const res = await change(user, { current_password: user.password, new_password: NEW_PASSWORD });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.must_change_password).toBe(false);
    const token = sessionCookie(res);
    expect(await codeOf(token, '/api/v1/capabilities')).toBe(200);
    expect(await codeOf(token, '/api/v1/auth/ws-ticket', 'POST')).toBe(200);
    expect((await login(user.username, NEW_PASSWORD)).json().data.must_change_password).toBe(false);
  });
});

describe('guessing through change-password counts toward the login throttle (CONTRACT §3.7)', () => {
  const from = (ip: string) => ({ remoteAddress: ip });
  const changeFrom = (user: TestUser, ip: string, currentPassword: string) =>
    svc.app.inject({
      method: 'POST',
      url: '/api/v1/auth/change-password',
      headers: { ...user.headers, ...PROBLEM },
      payload: { current_password: currentPassword, new_password: NEW_PASSWORD },
      ...from(ip),
    });
  const loginFrom = (user: TestUser, ip: string) =>
    svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: PROBLEM, payload: { username: user.username, password: user.password }, ...from(ip) });

  it('after 10 wrong current passwords the 11th attempt is 429/5001 with retry_after, even with the right one, and changes nothing', async () => {
    const user = await createUser(svc);
    for (let i = 0; i < 10; i++) expect((await changeFrom(user, '10.9.0.1', `wrong guess ${String(i)}`)).json().error_code).toBe(2000);
    const refused = await changeFrom(user, '10.9.0.1', user.password);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ status: 429, error_code: 5001, retryable: true });
    expect(refused.json().retry_after).toBeGreaterThanOrEqual(1);
    expect(refused.headers['retry-after']).toBe(String(refused.json().retry_after));
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect(await codeOf(user.token)).toBe(200);
    expect((await loginFrom(user, '10.9.0.9')).statusCode).toBe(200);
  });

  it('shares the counter of that user and IP with login: the next login from there is refused, from elsewhere not', async () => {
    const user = await createUser(svc);
    for (let i = 0; i < 10; i++) await changeFrom(user, '10.9.0.2', `wrong guess ${String(i)}`);
    expect((await loginFrom(user, '10.9.0.2')).json()).toMatchObject({ status: 429, error_code: 5001 });
    expect((await loginFrom(user, '10.9.0.3')).statusCode).toBe(200);
  });

  it('failed logins count against change-password from the same IP', async () => {
    const user = await createUser(svc);
    for (let i = 0; i < 10; i++) {
      const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: 'not it at all' }, ...from('10.9.0.4') });
      expect(res.statusCode).toBe(401);
    }
    expect((await changeFrom(user, '10.9.0.4', user.password)).json()).toMatchObject({ status: 429, error_code: 5001 });
  });
});
