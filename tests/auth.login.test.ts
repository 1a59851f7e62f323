// POST /auth/login: before setup, indistinguishable failures, username variants, throttling, session fixation.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { lockUser } from '../src/services/users/store.ts';
import { CEO, PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { statementsDuring } from './helpers/statements.ts';
import { createUser } from './helpers/users.ts';


// Per-operation limits (10 logins/min per IP) would mask the login throttle these tests are about;
// RATE_LIMITS_ENABLED=false leaves the throttle on (CONTRACT §5).
const ENV = { RATE_LIMIT_STORE: 'memory', RATE_LIMITS_ENABLED: 'false' };

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: ENV });
  const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: CEO });
  expect(res.statusCode).toBe(201);
});
afterAll(() => svc.close());

const login = (payload: unknown, opts: { ip?: string; headers?: Record<string, string>; cookies?: Record<string, string> } = {}, service: TestService = svc) =>
  service.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: JSON.stringify(payload),
    headers: { 'content-type': 'application/json', ...opts.headers },
    ...(opts.ip ? { remoteAddress: opts.ip } : {}),
    ...(opts.cookies ? { cookies: opts.cookies } : {}),
  });

const cookieValue = (res: Awaited<ReturnType<typeof login>>, name: string) => res.cookies.find((c) => c.name === name)?.value;

describe('before first-run setup', () => {
  it('is 409/4000 "first-run setup has not been done", in both formats', async () => {
    // A database of its own: the file's shared one already has its CEO.
    const fresh = await startTestService({ env: ENV });
    try {
      const envelope = await login(CEO, {}, fresh);
      expect(envelope.statusCode).toBe(409);
      expect(envelope.json()).toMatchObject({ success: false, error: 'first-run setup has not been done', error_detail: { error_code: 4000 } });
      const problem = await login(CEO, { headers: PROBLEM }, fresh);
      expect(problem.statusCode).toBe(409);
      expect(problem.json()).toMatchObject({ status: 409, error_code: 4000, detail: 'first-run setup has not been done' });
    } finally {
      await fresh.close();
    }
  });
});

describe('POST /auth/login', () => {
  it('answers 200 with a CookieSessionResponse and the three cookies', async () => {
    const res = await login(CEO);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      session_id: expect.any(String),
      expires_in: 3600,
      refresh_expires_in: 604800,
      must_change_password: false,
      user: { id: expect.any(String), username: 'chief', role: 'ceo', kind: 'human', must_change_password: false, mfa_enabled: false, org_roles: [], scoped_departments: [] },
    });
    expect(res.cookies.map((c) => c.name).sort()).toEqual(['csrf_token', 'refresh_token', 'session']);
    for (const c of res.cookies) expect(res.body).not.toContain(c.value);
  });

  it('reports must_change_password for a user the CEO created', async () => {
    const user = await createUser(svc, { role: 'manager', mustChangePassword: true });
    const res = await login({ username: user.username, password: user.password });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ must_change_password: true, user: { must_change_password: true, role: 'manager' } });
  });

  it('a request-shape error is 400/2001 (missing password, unknown field, 1025-char password)', async () => {
    for (const payload of [{ username: 'chief' }, { ...CEO, remember: true }, { username: 'chief', password: 'x'.repeat(1025) }]) {
      const res = await login(payload, { headers: PROBLEM });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, error_code: 2001 });
    }
  });
});

describe('failed logins are indistinguishable', () => {
  const withoutInstance = (body: { instance: string }) => ({ ...body, instance: undefined });

  it('unknown user and wrong password: same status, same body except instance (envelope)', async () => {
    const unknown = await login({ username: 'nobody-here', password: 'whatever password' }, { ip: '10.1.0.1' });
    const wrong = await login({ username: 'chief', password: 'whatever password' }, { ip: '10.1.0.1' });
    expect(unknown.statusCode).toBe(401);
    expect(wrong.statusCode).toBe(401);
    expect(unknown.json().error_detail.instance).not.toBe(wrong.json().error_detail.instance);
    const a: { error_detail: { instance: string } } = unknown.json();
    const b: { error_detail: { instance: string } } = wrong.json();
    expect({ ...a, error_detail: withoutInstance(a.error_detail) }).toEqual({ ...b, error_detail: withoutInstance(b.error_detail) });
    expect(wrong.json()).toMatchObject({ error: 'invalid username or password', error_detail: { error_code: 1000, error_category: 'auth' } });
    expect(unknown.headers['set-cookie']).toBeUndefined();
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  it('unknown user and wrong password: same ProblemDetail except instance', async () => {
    const unknown = await login({ username: 'nobody-here', password: 'whatever password' }, { ip: '10.1.0.2', headers: PROBLEM });
    const wrong = await login({ username: 'chief', password: 'whatever password' }, { ip: '10.1.0.2', headers: PROBLEM });
    expect(unknown.headers['content-type']).toBe('application/problem+json');
    expect(withoutInstance(unknown.json())).toEqual(withoutInstance(wrong.json()));
    expect(wrong.json()).toMatchObject({ status: 401, error_code: 1000, detail: 'invalid username or password' });
  });

  it('a short wrong password is a 401 like any other, not a schema error', async () => {
    const res = await login({ username: 'chief', password: 'short' }, { ip: '10.1.0.3', headers: PROBLEM });
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000, detail: 'invalid username or password' });
  });
});

describe('username variants', () => {
  // "Zoë Ångström" precomposed (NFC) and decomposed (NFD).
  const NFC = 'Zo\u00eb \u00c5ngstr\u00f6m';
  const NFD = NFC.normalize('NFD');
  let user: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    user = await createUser(svc, { role: 'manager', username: NFC });
  });

  it.each([
    ['the NFD form', NFD],
    ['upper case', NFC.toUpperCase()],
    ['lower-case NFD with surrounding spaces', `  ${NFD.toLowerCase()} `],
  ])('%s logs into the same account', async (_name, username) => {
    const res = await login({ username, password: user.password }, { ip: '10.2.0.1' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.user).toMatchObject({ id: user.id, username: NFC });
  });

  it.each([
    ['the NFD form', NFD],
    ['a case variant', NFC.toLowerCase()],
  ])('creating %s of an existing username is 409/4001', async (_name, username) => {
    await expect(createUser(svc, { username })).rejects.toMatchObject({ errorCode: 4001 });
  });

  it('creating a variant over HTTP (POST /users) is 409/4001, in both formats', async () => {
    const ceo = await login(CEO, { ip: '10.2.0.2' });
    const headers = { authorization: `Bearer ${cookieValue(ceo, 'session') ?? ''}` };
    const payload = { username: NFD.toUpperCase(), password: 'another long password', role: 'observer' };
    const envelope = await svc.app.inject({ method: 'POST', url: '/api/v1/users', headers, payload });
    expect(envelope.statusCode).toBe(409);
    expect(envelope.json().error_detail).toMatchObject({ error_code: 4001, error_category: 'conflict' });
    const problem = await svc.app.inject({ method: 'POST', url: '/api/v1/users', headers: { ...headers, ...PROBLEM }, payload });
    expect(problem.json()).toMatchObject({ status: 409, error_code: 4001 });
  });

  it('of two concurrent creations of case variants, exactly one wins; the other is 409/4001', async () => {
    const results = await Promise.allSettled([createUser(svc, { username: 'Twin.Name' }), createUser(svc, { username: 'twin.name' })]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const [lost] = results.filter((r) => r.status === 'rejected');
    expect(lost?.reason).toMatchObject({ errorCode: 4001 });
  });
});

describe('login throttling per (username, IP)', () => {
  type User = Awaited<ReturnType<typeof createUser>>;
  const wrong = (user: User, ip: string) => login({ username: user.username, password: 'not the password' }, { ip, headers: PROBLEM });
  const right = (user: User, ip: string, username = user.username) => login({ username, password: user.password }, { ip, headers: PROBLEM });

  it('after 10 failures the 11th attempt is 429/5001 with retry_after and Retry-After, even with the right password', async () => {
    const user = await createUser(svc, { role: 'observer' });
    for (let i = 0; i < 10; i++) expect((await wrong(user, '10.3.0.1')).statusCode).toBe(401);
    const refused = await right(user, '10.3.0.1');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ status: 429, error_code: 5001, error_category: 'rate_limit', retryable: true });
    expect(refused.json().retry_after).toBeGreaterThanOrEqual(1);
    expect(refused.headers['retry-after']).toBe(String(refused.json().retry_after));
    expect(refused.headers['set-cookie']).toBeUndefined();
    // The envelope carries the same facts.
    const envelope = await login({ username: user.username, password: user.password }, { ip: '10.3.0.1' });
    expect(envelope.json()).toMatchObject({ success: false, error_detail: { error_code: 5001, retryable: true } });
  });

  it('is matched on the normalised username (a case variant is the same counter)', async () => {
    const user = await createUser(svc, { role: 'observer' });
    for (let i = 0; i < 10; i++) expect((await wrong(user, '10.3.0.5')).statusCode).toBe(401);
    const refused = await right(user, '10.3.0.5', user.username.toUpperCase());
    expect(refused.json()).toMatchObject({ status: 429, error_code: 5001 });
  });

  it('does not lock the account from another IP', async () => {
    const user = await createUser(svc, { role: 'observer' });
    for (let i = 0; i < 10; i++) expect((await wrong(user, '10.3.0.6')).statusCode).toBe(401);
    expect((await right(user, '10.3.0.6')).statusCode).toBe(429);
    const res = await right(user, '10.3.0.2');
    expect(res.statusCode).toBe(200);
  });

  it('a success resets the (username, IP) counter', async () => {
    const user = await createUser(svc, { role: 'observer' });
    for (let i = 0; i < 9; i++) expect((await wrong(user, '10.3.0.3')).statusCode).toBe(401);
    expect((await right(user, '10.3.0.3')).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) expect((await wrong(user, '10.3.0.3')).statusCode).toBe(401);
    expect((await wrong(user, '10.3.0.3')).statusCode).toBe(429);
  });

  it('concurrent wrong passwords get at most 10 verdicts; the rest are refused', async () => {
    const target = await createUser(svc, { role: 'observer' });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => login({ username: target.username, password: 'not the password' }, { ip: '10.3.0.4', headers: PROBLEM })),
    );
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
  });
});

describe('login throttling per IP', () => {
  it('after 100 failures from one IP within the hour, any further attempt is 429/5001', async () => {
    const user = await createUser(svc, { role: 'observer' });
    // Different usernames, so only the per-IP counter can be what refuses.
    for (let batch = 0; batch < 10; batch++) {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => login({ username: `ghost-${batch}-${i}`, password: 'whatever password' }, { ip: '10.4.0.1' })),
      );
      expect(results.map((r) => r.statusCode)).toEqual(Array.from({ length: 10 }, () => 401));
    }
    const refused = await login({ username: user.username, password: user.password }, { ip: '10.4.0.1', headers: PROBLEM });
    expect(refused.json()).toMatchObject({ status: 429, error_code: 5001 });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await login({ username: user.username, password: user.password }, { ip: '10.4.0.2' })).statusCode).toBe(200);
  });
});

describe('session fixation', () => {
  it('a session cookie sent with the login request is never the token issued', async () => {
    const first = await login(CEO, { ip: '10.5.0.1' });
    const planted = cookieValue(first, 'session') ?? '';
    const attackerChosen = 'A'.repeat(43);
    for (const presented of [planted, attackerChosen]) {
      const res = await login(CEO, { ip: '10.5.0.1', cookies: { session: presented } });
      expect(res.statusCode).toBe(200);
      const issued = cookieValue(res, 'session');
      expect(issued).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(issued).not.toBe(presented);
      expect(res.json().data.session_id).not.toBe(first.json().data.session_id);
    }
    // The planted token was not adopted either: it still names its own, older session.
    const me = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', headers: { authorization: `Bearer ${planted}` } });
    const sessions: { session_id: string; is_current: boolean }[] = me.json().data;
    expect(sessions.find((s) => s.is_current)?.session_id).toBe(first.json().data.session_id);
    const forged = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${attackerChosen}` } });
    expect(forged.statusCode).toBe(401);
  });
});

describe('login throttling with the PostgreSQL store', () => {
  it('is shared by every instance on the same database', async () => {
    const env = { RATE_LIMIT_STORE: 'postgres', RATE_LIMITS_ENABLED: 'false' };
    const first = await startTestService({ env });
    const second = await startTestService({ env, databaseUrl: first.databaseUrl });
    try {
      expect((await first.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: CEO })).statusCode).toBe(201);
      const attempt = (service: TestService, password: string) =>
        service.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: CEO.username, password }, remoteAddress: '10.6.0.1', headers: PROBLEM });
      for (let i = 0; i < 10; i++) expect((await attempt(i % 2 === 0 ? first : second, 'not the password')).statusCode).toBe(401);
      expect((await attempt(second, CEO.password)).json()).toMatchObject({ status: 429, error_code: 5001 });
      expect((await attempt(first, CEO.password)).json()).toMatchObject({ status: 429, error_code: 5001 });
    } finally {
      await second.close();
      await first.close();
    }
  });
});

describe('a login commits without waiting for the WAL flush (docs/auth.md)', () => {
  const synchronousCommit = async (tx: EntityManager) => (await sql<{ value: string }>`select current_setting('synchronous_commit') as value`.execute(kysely(tx))).rows[0]?.value;

  it('is asked for by the user lock, for that transaction only', async () => {
    const user = await createUser(svc);
    const em = svc.deps.orm.em.fork();
    await em.transactional(async (tx) => {
      expect(await lockUser(tx, user.id, { relaxCommitDurability: true })).toBe(true);
      expect(await synchronousCommit(tx)).toBe('off');
    });
    await em.transactional(async (tx) => {
      expect(await lockUser(tx, user.id)).toBe(true);
      expect(await synchronousCommit(tx)).toBe('on');
    });
  });

  it('is what a login takes its user lock with, in the same statement', async () => {
    const { username, password } = await createUser(svc);
    const sent = (await statementsDuring(async () => expect((await login({ username, password })).statusCode).toBe(200))).map((s) => s.text);
    expect(sent.filter((text) => /for update/.test(text) && /set_config\('synchronous_commit', 'off', true\)/.test(text))).toHaveLength(1);
    expect(sent.filter((text) => /synchronous_commit/.test(text))).toHaveLength(1);
  });
});

describe('a session is written with its first refresh token', () => {
  it('in one statement, and that token refreshes the session', async () => {
    const { username, password } = await createUser(svc);
    let res: Awaited<ReturnType<typeof login>> | undefined;
    const sent = (await statementsDuring(async () => void (res = await login({ username, password })))).map((s) => s.text);
    expect(res?.statusCode).toBe(200);
    const writes = sent.filter((text) => /insert into "(sessions|refresh_tokens)"/.test(text));
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/insert into "sessions".*insert into "refresh_tokens"/);
    const refreshToken = res ? cookieValue(res, 'refresh_token') : undefined;
    expect(refreshToken).toBeDefined();
    const refreshed = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', cookies: { refresh_token: refreshToken ?? '' } });
    expect(refreshed.statusCode).toBe(200);
  });
});
