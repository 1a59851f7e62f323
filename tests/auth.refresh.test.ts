// POST /auth/refresh: rotation of both tokens, replay revokes the whole session, one winner under concurrency.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const PROBLEM = { accept: 'application/problem+json' };

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMIT_STORE: 'memory' } });
  // Signing in (for a user's second session) needs first-run setup done.
  await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

type Tokens = { access: string; refresh: string };
type InjectResult = Awaited<ReturnType<TestService['app']['inject']>>;

let nextIp = 1;
/** Each refresh from its own address, so the per-IP refresh window never interferes. */
const refresh = (refreshToken: string | undefined, headers: Record<string, string> = {}) =>
  svc.app.inject({
    method: 'POST',
    url: '/api/v1/auth/refresh',
    headers,
    remoteAddress: `10.9.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 1}`,
    ...(refreshToken === undefined ? {} : { cookies: { refresh_token: refreshToken } }),
  });

const tokensOf = (res: InjectResult): Tokens => ({
  access: res.cookies.find((c) => c.name === 'session')?.value ?? '',
  refresh: res.cookies.find((c) => c.name === 'refresh_token')?.value ?? '',
});

const me = (accessToken: string) =>
  svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${accessToken}`, ...PROBLEM } });

const codeOf = async (accessToken: string) => {
  const res = await me(accessToken);
  return res.statusCode === 200 ? 200 : (res.json().error_code as number);
};

const sql = (query: string, params: unknown[] = []) => svc.db.orm.em.fork().getConnection().execute<Record<string, unknown>[]>(query, params);

describe('a successful refresh', () => {
  let user: TestUser;
  let res: InjectResult;
  beforeAll(async () => {
    user = await createUser(svc, { role: 'manager' });
    res = await refresh(user.refreshToken);
  });

  it('answers 200 with a CookieSessionResponse for the same session', () => {
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      session_id: user.sessionId,
      expires_in: 3600,
      refresh_expires_in: 604800,
      must_change_password: false,
      user: expect.objectContaining({ id: user.id, role: 'manager' }),
    });
  });

  it('sets all three cookies with new values', () => {
    const names = res.cookies.map((c) => c.name).sort();
    expect(names).toEqual(['csrf_token', 'refresh_token', 'session']);
    const t = tokensOf(res);
    expect(t.access).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(t.access).not.toBe(user.token);
    expect(t.refresh).not.toBe(user.refreshToken);
    expect(res.cookies.find((c) => c.name === 'csrf_token')?.value).not.toBe(user.csrfToken);
    for (const c of res.cookies) expect(res.body).not.toContain(c.value);
  });

  it('the old access token answers 401/1000 at once (rotated, not revoked)', async () => {
    expect(await codeOf(user.token)).toBe(1000);
  });

  it('the new access token works', async () => {
    expect(await codeOf(tokensOf(res).access)).toBe(200);
  });

  it('the new refresh token rotates again', async () => {
    // Its own user: rotating again retires the access token the other tests here still use.
    const own = await createUser(svc);
    const first = await refresh(own.refreshToken);
    expect(first.statusCode).toBe(200);
    const again = await refresh(tokensOf(first).refresh);
    expect(again.statusCode).toBe(200);
    expect(again.json().data.session_id).toBe(own.sessionId);
    expect(await codeOf(tokensOf(again).access)).toBe(200);
  });
});

describe('replaying a used refresh token', () => {
  let user: TestUser;
  let newest: Tokens;
  let replay: InjectResult;
  beforeAll(async () => {
    user = await createUser(svc);
    const first = await refresh(user.refreshToken);
    const second = await refresh(tokensOf(first).refresh);
    newest = tokensOf(second);
    replay = await refresh(user.refreshToken, PROBLEM);
  });

  it('answers 401/1002', () => {
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toMatchObject({ status: 401, error_code: 1002, error_category: 'auth' });
    expect(replay.headers['set-cookie']).toBeUndefined();
  });

  it('revokes the whole session, committed although the request failed', async () => {
    const [row] = await sql('select revoked_at, revoked_reason from sessions where id = ?', [user.sessionId]);
    expect(row?.revoked_at).not.toBeNull();
    expect(row?.revoked_reason).toBe('refresh_replayed');
  });

  it('afterwards the newest access token of that session answers 401/1002', async () => {
    expect(await codeOf(newest.access)).toBe(1002);
  });

  it('afterwards the newest refresh token of that session answers 401/1002 (envelope)', async () => {
    const res = await refresh(newest.refresh);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ success: false, error_detail: { error_code: 1002 } });
  });

  it('leaves the user\'s other sessions alone', async () => {
    // A user signed in twice, plus a bystander; the replay happens on the first session only.
    const owner = await createUser(svc);
    const secondLogin = await svc.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { username: owner.username, password: owner.password },
      remoteAddress: `10.8.0.${(nextIp++ % 250) + 1}`,
    });
    expect(secondLogin.statusCode).toBe(200);
    const second = tokensOf(secondLogin);
    const bystander = await createUser(svc);

    const rotated = await refresh(owner.refreshToken);
    expect(rotated.statusCode).toBe(200);
    const replayed = await refresh(owner.refreshToken, PROBLEM);
    expect(replayed.json()).toMatchObject({ status: 401, error_code: 1002 });
    expect(await codeOf(tokensOf(rotated).access)).toBe(1002);

    // The same user's other session: its access token still works and its refresh token still rotates.
    expect(await codeOf(second.access)).toBe(200);
    const renewed = await refresh(second.refresh);
    expect(renewed.statusCode).toBe(200);
    expect(renewed.json().data.session_id).toBe(secondLogin.json().data.session_id);
    expect(await codeOf(tokensOf(renewed).access)).toBe(200);
    // Another user's session, likewise.
    expect(await codeOf(bystander.token)).toBe(200);
  });
});

describe('concurrent refreshes with one token', () => {
  it.each([2, 5])('of %i, exactly one is 200 and at most one of the issued access tokens works afterwards', async (n) => {
    const user = await createUser(svc);
    const results = await Promise.all(Array.from({ length: n }, () => refresh(user.refreshToken, PROBLEM)));
    const ok = results.filter((r) => r.statusCode === 200);
    expect(ok).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expect(r.json()).toMatchObject({ status: 401, error_code: 1002 });
    const issued = ok.map((r) => tokensOf(r).access);
    const working = (await Promise.all([user.token, ...issued].map(codeOf))).filter((c) => c === 200);
    expect(working.length).toBeLessThanOrEqual(1);
    // And no refresh token of any branch can grow a live one.
    for (const r of ok) expect((await refresh(tokensOf(r).refresh)).statusCode).not.toBe(200);
  });
});

describe('refresh failures', () => {
  it('an unknown refresh token is 401/1000, in both formats', async () => {
    const problem = await refresh('U'.repeat(43), PROBLEM);
    expect(problem.statusCode).toBe(401);
    expect(problem.json()).toMatchObject({ status: 401, error_code: 1000 });
    const envelope = await refresh('U'.repeat(43));
    expect(envelope.json()).toMatchObject({ success: false, error_detail: { error_code: 1000 } });
  });

  it('a missing refresh_token cookie is 401/1000', async () => {
    const res = await refresh(undefined, PROBLEM);
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
  });

  it('a malformed refresh_token cookie is 401/1000', async () => {
    for (const bad of ['', 'short', 'x'.repeat(8192), 'has spaces in it and more']) {
      const res = await refresh(bad, PROBLEM);
      expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
    }
  });

  it('an access token presented as the refresh token is 401/1000', async () => {
    const user = await createUser(svc);
    expect((await refresh(user.token, PROBLEM)).json()).toMatchObject({ error_code: 1000 });
    expect(await codeOf(user.token)).toBe(200);
  });

  it('an expired refresh token is 401/1000', async () => {
    const user = await createUser(svc);
    await sql(`update refresh_tokens set expires_at = now() - interval '1 second' where session_id = ?`, [user.sessionId]);
    expect((await refresh(user.refreshToken, PROBLEM)).json()).toMatchObject({ status: 401, error_code: 1000 });
  });

  it('past the absolute session lifetime (30 days) it is 401/1000', async () => {
    const user = await createUser(svc);
    await sql(`update sessions set absolute_expires_at = now() - interval '1 second' where id = ?`, [user.sessionId]);
    expect((await refresh(user.refreshToken, PROBLEM)).json()).toMatchObject({ status: 401, error_code: 1000 });
  });

  it('the refresh token of a logged-out session is 401/1002', async () => {
    const user = await createUser(svc);
    await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: user.headers });
    expect((await refresh(user.refreshToken, PROBLEM)).json()).toMatchObject({ status: 401, error_code: 1002 });
  });
});

describe('an expired access token', () => {
  it('answers 401/1000 and does not end the session: the refresh token still renews it', async () => {
    const user = await createUser(svc);
    await sql(`update sessions set expires_at = now() - interval '1 second' where id = ?`, [user.sessionId]);
    expect(await codeOf(user.token)).toBe(1000);
    const res = await refresh(user.refreshToken, PROBLEM);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.session_id).toBe(user.sessionId);
    expect(await codeOf(tokensOf(res).access)).toBe(200);
  });

  it('is not extended by use: used in the second half of its life it keeps its expiry (CONTRACT §3.7)', async () => {
    const user = await createUser(svc);
    // lucia would extend a token used past half its lifetime (its "active period"): that must not happen.
    await sql(`update sessions set expires_at = now() + interval '10 minutes' where id = ?`, [user.sessionId]);
    const [before] = await sql('select expires_at from sessions where id = ?', [user.sessionId]);
    for (let i = 0; i < 3; i++) expect(await codeOf(user.token)).toBe(200);
    const [after] = await sql('select expires_at from sessions where id = ?', [user.sessionId]);
    expect(new Date(String(after?.expires_at)).getTime()).toBe(new Date(String(before?.expires_at)).getTime());
  });

  it('only a refresh gives the session a later expiry, with a new token', async () => {
    const user = await createUser(svc);
    await sql(`update sessions set expires_at = now() + interval '10 minutes' where id = ?`, [user.sessionId]);
    const res = await refresh(user.refreshToken);
    expect(res.statusCode).toBe(200);
    const [row] = await sql('select expires_at from sessions where id = ?', [user.sessionId]);
    expect(new Date(String(row?.expires_at)).getTime()).toBeGreaterThan(Date.now() + 59 * 60_000);
    expect(await codeOf(user.token)).toBe(1000);
  });
});
