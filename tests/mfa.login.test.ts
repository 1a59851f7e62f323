// CONTRACT §3.6: POST /auth/login with `otp` for a user with TOTP on — after the password only, the two details, replay, recovery codes, the throttle, one read.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { PROBLEM } from './helpers/http.ts';
import { enableMfa, manualClock, totpCode, wrongCode } from './helpers/mfa.ts';
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

// Per-operation limits (10 logins a minute per IP) would hide the login throttle; RATE_LIMITS_ENABLED=false keeps it.
const ENV = { RATE_LIMIT_STORE: 'memory', RATE_LIMITS_ENABLED: 'false' };
const clock = manualClock();
let svc: TestService;
let doc: OpenApiDocument;
let nextIp = 1;
beforeAll(async () => {
  svc = await startTestService({ env: ENV, clock });
  await createUser(svc, { role: 'ceo' });
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(() => svc.close());

/** Every test signs in from an address of its own, so the per-IP count of one never reaches another. */
const freshIp = () => `10.28.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 1}`;

async function login(body: Record<string, unknown>, opts: { ip?: string; headers?: Record<string, string> } = {}) {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...opts.headers },
    remoteAddress: opts.ip ?? '127.0.0.1',
  });
  expectResponseConforms(doc, 'POST', '/api/v1/auth/login', res);
  return res;
}
const detailOf = (res: Awaited<ReturnType<typeof login>>): unknown => res.json<{ error_detail?: { detail?: string } }>().error_detail?.detail;

type WithMfa = TestUser & { secret: string; recoveryCodes: string[] };
async function userWithMfa(): Promise<WithMfa> {
  const user = await createUser(svc, { role: 'manager' });
  return { ...user, ...(await enableMfa(user, clock)) };
}

describe('a user with TOTP on', () => {
  it('without otp: 401/1000 "one-time code required" in both formats, and no session', async () => {
    const user = await userWithMfa();
    const res = await login({ username: user.username, password: user.password });
    expect(res.statusCode).toBe(401);
    expect(res.json().error_detail).toMatchObject({ error_code: 1000, detail: 'one-time code required' });
    expect(res.cookies).toEqual([]);
    const problem = await login({ username: user.username, password: user.password }, { headers: PROBLEM });
    expect(problem.json()).toMatchObject({ status: 401, error_code: 1000, detail: 'one-time code required' });
  });

  it('only after the password: a wrong password is "invalid username or password" with or without a code, like an unknown user', async () => {
    const user = await userWithMfa();
    const code = totpCode(user.secret, clock.now());
    for (const body of [
      { username: user.username, password: `${user.password}x` },
      { username: user.username, password: `${user.password}x`, otp: code },
      { username: `${user.username}-nobody`, password: user.password, otp: code },
    ]) {
      const res = await login(body, { ip: freshIp() });
      expect(res.statusCode).toBe(401);
      expect(res.json().error_detail).toMatchObject({ error_code: 1000, detail: 'invalid username or password' });
    }
    // The code presented with a wrong password was not used up.
    expect((await login({ username: user.username, password: user.password, otp: code })).statusCode).toBe(200);
  });

  it('the current code signs in (200, the three cookies, mfa_enabled true); so do the previous and next step codes', async () => {
    const user = await userWithMfa();
    const res = await login({ username: user.username, password: user.password, otp: totpCode(user.secret, clock.now()) });
    expect(res.statusCode).toBe(200);
    expect(res.cookies.map((c) => c.name).sort()).toEqual(['csrf_token', 'refresh_token', 'session']);
    expect(res.json().data.user.mfa_enabled).toBe(true);
    for (const steps of [-1, 1]) {
      clock.advance(90);
      expect((await login({ username: user.username, password: user.password, otp: totpCode(user.secret, clock.now(), steps) })).statusCode).toBe(200);
    }
  });

  it('bad codes are 401/1000 "invalid one-time code": the step before the previous, two ahead, wrong length, non-digits, empty-looking', async () => {
    const user = await userWithMfa();
    const now = clock.now();
    const current = totpCode(user.secret, now);
    const accepted = [-1, 0, 1].map((s) => totpCode(user.secret, now, s));
    const sessionsOf = (userId: string) => kysely(svc.deps.orm.em.fork()).selectFrom('sessions').select('id').where('userId', '=', userId).execute();
    const before = await sessionsOf(user.id);
    const bad = [totpCode(user.secret, now, -2), totpCode(user.secret, now, 2), wrongCode(user.secret, now), current.slice(1), `${current}1`, 'l2e456', ' - '];
    for (const otp of bad.filter((c) => !accepted.includes(c))) {
      const res = await login({ username: user.username, password: user.password, otp }, { ip: freshIp() });
      expect(res.statusCode, otp).toBe(401);
      expect(res.json().error_detail, otp).toMatchObject({ error_code: 1000, detail: 'invalid one-time code' });
      expect(res.cookies, otp).toEqual([]);
    }
    // The session each one began was rolled back with the refusal.
    expect(await sessionsOf(user.id)).toEqual(before);
    // Nothing was used up by them.
    expect((await login({ username: user.username, password: user.password, otp: current })).statusCode).toBe(200);
  });

  it('an otp that is not a string, or longer than 64 characters, is a shape error (400/2001)', async () => {
    const user = await userWithMfa();
    for (const otp of [123456, null, 'x'.repeat(65)]) {
      const res = await login({ username: user.username, password: user.password, otp });
      expect(res.statusCode).toBe(400);
      expect(res.json().error_detail.error_code).toBe(2001);
    }
  });

  it('a code is accepted once: its replay, and an earlier step after a later one, are "invalid one-time code"', async () => {
    const user = await userWithMfa();
    const code = totpCode(user.secret, clock.now());
    expect((await login({ username: user.username, password: user.password, otp: code })).statusCode).toBe(200);
    const replay = await login({ username: user.username, password: user.password, otp: code });
    expect(replay.statusCode).toBe(401);
    expect(detailOf(replay)).toBe('invalid one-time code');
    expect((await login({ username: user.username, password: user.password, otp: totpCode(user.secret, clock.now(), 1) })).statusCode).toBe(200);
    expect(detailOf(await login({ username: user.username, password: user.password, otp: totpCode(user.secret, clock.now(), -1) }))).toBe('invalid one-time code');
  });

  it('of concurrent sign-ins with one code, exactly one succeeds', async () => {
    const user = await userWithMfa();
    const otp = totpCode(user.secret, clock.now());
    const answers = await Promise.all(Array.from({ length: 6 }, () => login({ username: user.username, password: user.password, otp }, { ip: freshIp() })));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401, 401, 401]);
  });

  it('a recovery code signs in once (any case, with or without hyphens or spaces), then it is "invalid one-time code"', async () => {
    const user = await userWithMfa();
    const [first = '', second = '', third = ''] = user.recoveryCodes;
    for (const otp of [first, second.toUpperCase().replaceAll('-', ''), third.replaceAll('-', ' ')]) {
      expect((await login({ username: user.username, password: user.password, otp })).statusCode, otp).toBe(200);
      const again = await login({ username: user.username, password: user.password, otp });
      expect(again.statusCode, otp).toBe(401);
      expect(detailOf(again), otp).toBe('invalid one-time code');
    }
    expect((await user.caller.auth.mfa.status()).recovery_codes_remaining).toBe(7);
  });

  it("another user's recovery code is no code of this user's", async () => {
    const [user, other] = [await userWithMfa(), await userWithMfa()];
    expect(detailOf(await login({ username: user.username, password: user.password, otp: other.recoveryCodes[0] }))).toBe('invalid one-time code');
    expect((await login({ username: other.username, password: other.password, otp: other.recoveryCodes[0] })).statusCode).toBe(200);
  });
});

describe('a user without TOTP on', () => {
  it('otp is ignored, whatever it is; a pending enrollment does not ask for one', async () => {
    const user = await createUser(svc);
    for (const otp of [undefined, '000000', 'anything at all']) {
      expect((await login({ username: user.username, password: user.password, ...(otp === undefined ? {} : { otp }) })).statusCode).toBe(200);
    }
    await user.caller.auth.mfa.enroll();
    const res = await login({ username: user.username, password: user.password });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.user.mfa_enabled).toBe(false);
  });
});

describe('the login throttle (CONTRACT §3.4, §5)', () => {
  it('wrong codes count as failed logins: after 10, the 11th attempt is 429/5001 even with the right code', async () => {
    const user = await userWithMfa();
    const ip = freshIp();
    for (let i = 0; i < 10; i++) expect(detailOf(await login({ username: user.username, password: user.password, otp: wrongCode(user.secret, clock.now()) }, { ip }))).toBe('invalid one-time code');
    const refused = await login({ username: user.username, password: user.password, otp: totpCode(user.secret, clock.now()) }, { ip });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error_detail.error_code).toBe(5001);
    // Per (user, IP): the same user from elsewhere is not locked out.
    expect((await login({ username: user.username, password: user.password, otp: totpCode(user.secret, clock.now()) }, { ip: freshIp() })).statusCode).toBe(200);
  });

  it('asking without a code neither counts nor resets the count', async () => {
    const user = await userWithMfa();
    const ip = freshIp();
    const bare = { username: user.username, password: user.password };
    // Never counted: many in a row are all answered.
    for (let i = 0; i < 15; i++) expect(detailOf(await login(bare, { ip }))).toBe('one-time code required');
    for (let i = 0; i < 9; i++) expect((await login({ ...bare, otp: wrongCode(user.secret, clock.now()) }, { ip })).statusCode).toBe(401);
    // Were these a success, the nine failures would be forgotten and the 11th attempt below would pass.
    for (let i = 0; i < 3; i++) expect(detailOf(await login(bare, { ip }))).toBe('one-time code required');
    expect((await login({ ...bare, otp: wrongCode(user.secret, clock.now()) }, { ip })).statusCode).toBe(401);
    expect((await login({ ...bare, otp: totpCode(user.secret, clock.now()) }, { ip })).statusCode).toBe(429);
  });

  it('a sign-in with the right code resets the (username, IP) count', async () => {
    const user = await userWithMfa();
    const ip = freshIp();
    const bare = { username: user.username, password: user.password };
    for (let i = 0; i < 9; i++) await login({ ...bare, otp: wrongCode(user.secret, clock.now()) }, { ip });
    expect((await login({ ...bare, otp: totpCode(user.secret, clock.now()) }, { ip })).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) expect((await login({ ...bare, otp: wrongCode(user.secret, clock.now()) }, { ip })).statusCode).toBe(401);
  });
});

describe('cost', () => {
  /** The statements sent while `run` runs, each with the pg client that sent it (background jobs send theirs meanwhile). */
  async function sentDuring(run: () => Promise<void>): Promise<{ text: string; client: unknown }[]> {
    const query = vi.spyOn(pg.Client.prototype, 'query');
    try {
      await run();
      return query.mock.calls.flatMap(([sent]: unknown[], i) => {
        const text = typeof sent === 'string' ? sent : typeof sent === 'object' && sent !== null && 'text' in sent ? String(sent.text) : null;
        return text === null ? [] : [{ text, client: query.mock.contexts[i] }];
      });
    } finally {
      query.mockRestore();
    }
  }
  // The statements of a sign-in, told from the background's by the tables they touch.
  const SIGN_IN_TABLES = /"(users|sessions|refresh_tokens|user_totp|mfa_recovery_codes)"/;

  it('the TOTP key comes with the read of the user: a sign-in with a code sends one statement more than one without, the one that uses it up, in the transaction that issues the session', async () => {
    const plain = await createUser(svc, { role: 'manager' });
    const user = await userWithMfa();
    const signIn = async (body: Record<string, unknown>) => {
      const sent = await sentDuring(async () => expect((await login(body, { ip: freshIp() })).statusCode).toBe(200));
      return { sent, texts: sent.map((s) => s.text).filter((text) => SIGN_IN_TABLES.test(text)) };
    };
    // Once first, so that the first-run check of the service is behind it.
    await signIn({ username: plain.username, password: plain.password });
    const without = await signIn({ username: plain.username, password: plain.password });
    const withCode = await signIn({ username: user.username, password: user.password, otp: totpCode(user.secret, clock.now()) });
    expect(withCode.texts.filter((text) => !/^update "user_totp"/.test(text))).toEqual(without.texts);
    expect(withCode.texts.filter((text) => /^update "user_totp"/.test(text))).toHaveLength(1);
    // The read of the user is the one that brings the key.
    expect(withCode.texts.filter((text) => /"user_totp"/.test(text) && /^select /.test(text))).toHaveLength(1);
    expect(withCode.texts[0]).toMatch(/^select "users"\.\*.*"user_totp"/s);
    // Used up in the transaction that issues the session (one commit for both), after the user's row is locked.
    const own = withCode.sent.filter((s) => s.client === withCode.sent.find((x) => /^update "user_totp"/.test(x.text))?.client).map((s) => s.text);
    const at = own.findIndex((text) => /^update "user_totp"/.test(text));
    const begin = own.lastIndexOf('begin', at);
    expect(begin).toBeGreaterThanOrEqual(0);
    expect(own.slice(begin, at).some((text) => /insert into "sessions"/.test(text))).toBe(true);
    expect(own.slice(begin, at).some((text) => /^select "id", set_config/.test(text))).toBe(true);
    expect(own.indexOf('commit', at)).toBeGreaterThan(at);
    expect(own.filter((text) => text === 'begin' || text === 'commit')).toEqual(['begin', 'commit']);
  });
});
