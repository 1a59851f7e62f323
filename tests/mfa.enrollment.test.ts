// CONTRACT §3.6: GET /auth/mfa, enrolling and confirming TOTP, turning it off, new recovery codes (auth.mfa.*), keys refused, secrets at rest.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { OPERATION_POLICIES } from '../src/limits/policy.ts';
import { routeTable } from '../src/rest/routeTable.ts';
import { issueKey } from './helpers/apiKeys.ts';
import { auditRows } from './helpers/audit.ts';
import { PROBLEM } from './helpers/http.ts';
import { enableMfa, manualClock, totpCode, wrongCode } from './helpers/mfa.ts';
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const clock = manualClock();
let svc: TestService;
let doc: OpenApiDocument;
let ceo: TestUser;
beforeAll(async () => {
  // Limits off: some tests call one operation more often than its window allows; the login throttle stays on.
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', RATE_LIMIT_STORE: 'memory' }, clock });
  // Sign-ins need first-run setup done: a CEO.
  ceo = await createUser(svc, { role: 'ceo' });
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(() => svc.close());

type Method = 'GET' | 'POST' | 'DELETE';
async function call(method: Method, url: string, user: { headers: Record<string, string> }, body?: unknown, headers: Record<string, string> = {}) {
  const res = await svc.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: { ...user.headers, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  expectResponseConforms(doc, method, `/api/v1${url}`, res);
  return res;
}

const db = () => kysely(svc.deps.orm.em.fork());
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function storedTotp(userId: string) {
  return db().selectFrom('user_totp').selectAll().where('userId', '=', userId).executeTakeFirst();
}
async function storedCodeHashes(userId: string): Promise<string[]> {
  return (await db().selectFrom('mfa_recovery_codes').select('codeHash').where('userId', '=', userId).orderBy('codeHash').execute()).map((r) => r.codeHash);
}
async function mfaEnabledColumn(userId: string): Promise<boolean> {
  return (await db().selectFrom('users').select('mfaEnabled').where('id', '=', userId).executeTakeFirstOrThrow()).mfaEnabled;
}
/** The `mfa_enabled` of each user.updated event about the user, in order. */
async function updatedEvents(userId: string): Promise<unknown[]> {
  const rows = await db()
    .selectFrom('events')
    .select('data')
    .where('type', '=', 'user.updated')
    .where(sql<string>`data->>'id'`, '=', userId)
    .orderBy('rowId')
    .execute();
  return rows.map((r) => r.data.mfa_enabled);
}
const login = (username: string, password: string, otp?: string) =>
  svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password, ...(otp === undefined ? {} : { otp }) } });

describe('GET /auth/mfa', () => {
  it('a new user: TOTP off, no recovery codes, not required (no MFA_REQUIRED_ROLES)', async () => {
    const user = await createUser(svc);
    const res = await call('GET', '/auth/mfa', user);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ totp_enabled: false, recovery_codes_remaining: 0, required: false });
  });

  it('with TOTP on: 10 recovery codes, one fewer for each used', async () => {
    const user = await createUser(svc);
    const { recoveryCodes } = await enableMfa(user, clock);
    expect((await user.caller.auth.mfa.status()).recovery_codes_remaining).toBe(10);
    expect((await login(user.username, user.password, recoveryCodes[3])).statusCode).toBe(200);
    expect(await user.caller.auth.mfa.status()).toEqual({ totp_enabled: true, recovery_codes_remaining: 9, required: false });
  });
});

describe('POST /auth/mfa/totp/enroll', () => {
  it('answers a base32 key of 160 bits and the otpauth URL of §3.6 with the username percent-encoded', async () => {
    const user = await createUser(svc, { username: `Zoë O'Hara+${Date.now()}` });
    const res = await call('POST', '/auth/mfa/totp/enroll', user);
    expect(res.statusCode).toBe(200);
    const { secret, otpauth_url } = res.json().data;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const suffix = user.username.split('+')[1] ?? '';
    expect(otpauth_url).toBe(`otpauth://totp/agent-org:Zo%C3%AB%20O'Hara%2B${suffix}?secret=${secret}&issuer=agent-org&algorithm=SHA1&digits=6&period=30`);
    // Pending: not on until confirmed.
    expect(await user.caller.auth.mfa.status()).toMatchObject({ totp_enabled: false });
    expect((await login(user.username, user.password)).statusCode).toBe(200);
  });

  it('each enrollment is a new random key', async () => {
    const [a, b] = [await createUser(svc), await createUser(svc)];
    const keys = [(await a.caller.auth.mfa.enroll()).secret, (await b.caller.auth.mfa.enroll()).secret, (await a.caller.auth.mfa.enroll()).secret];
    expect(new Set(keys).size).toBe(3);
  });

  it("a new enrollment replaces an unconfirmed one: the first key's codes no longer confirm", async () => {
    const user = await createUser(svc);
    const first = await user.caller.auth.mfa.enroll();
    const second = await user.caller.auth.mfa.enroll();
    await expect(user.caller.auth.mfa.confirm({ code: totpCode(first.secret, clock.now()) })).rejects.toMatchObject({ errorCode: 2000, detail: 'invalid one-time code' });
    await expect(user.caller.auth.mfa.confirm({ code: totpCode(second.secret, clock.now()) })).resolves.toMatchObject({ recovery_codes: expect.any(Array) });
  });

  it('with TOTP on: 409/4000, and the key in use stays', async () => {
    const user = await createUser(svc);
    const { secret } = await enableMfa(user, clock);
    const before = await storedTotp(user.id);
    const res = await call('POST', '/auth/mfa/totp/enroll', user);
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail).toMatchObject({ error_code: 4000, detail: 'two-factor authentication is already on' });
    expect(await storedTotp(user.id)).toEqual(before);
    expect((await login(user.username, user.password, totpCode(secret, clock.now()))).statusCode).toBe(200);
  });

  it('the key is stored sealed (not as its base32 or bytes), and no later answer carries it', async () => {
    const user = await createUser(svc);
    const { secret } = await enableMfa(user, clock);
    const stored = await storedTotp(user.id);
    const hex = Buffer.from(secret.padEnd(40, '='), 'utf8').toString('hex');
    expect(stored?.secret).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(stored?.secret).not.toContain(secret);
    expect(stored?.secret.toLowerCase()).not.toContain(hex);
    for (const url of ['/auth/mfa', '/auth/me', `/users/${user.id}`]) {
      const res = await call('GET', url, user);
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain(secret);
    }
  });
});

describe('POST /auth/mfa/totp/confirm', () => {
  it('a current code turns TOTP on: 10 distinct recovery codes, mfa_enabled on /auth/me and /users/{id}, one user.updated event', async () => {
    const user = await createUser(svc);
    const { secret } = await user.caller.auth.mfa.enroll();
    const res = await call('POST', '/auth/mfa/totp/confirm', user, { code: totpCode(secret, clock.now()) }, { 'x-csrf-token': user.csrfToken });
    expect(res.statusCode).toBe(200);
    const codes: string[] = res.json().data.recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/);
    expect((await call('GET', '/auth/me', user)).json().data.mfa_enabled).toBe(true);
    expect((await call('GET', `/users/${user.id}`, user)).json().data.mfa_enabled).toBe(true);
    expect(await updatedEvents(user.id)).toEqual([true]);
    expect(await mfaEnabledColumn(user.id)).toBe(true);
  });

  it("the previous and the next step's codes are accepted", async () => {
    for (const steps of [-1, 1]) {
      const user = await createUser(svc);
      const { secret } = await user.caller.auth.mfa.enroll();
      await expect(user.caller.auth.mfa.confirm({ code: totpCode(secret, clock.now(), steps) })).resolves.toMatchObject({ recovery_codes: expect.any(Array) });
    }
  });

  it('bad codes are 400/2000 "invalid one-time code" and change nothing: the step before the previous, two steps ahead, wrong length, non-digits, a recovery-shaped code', async () => {
    const user = await createUser(svc);
    const { secret } = await user.caller.auth.mfa.enroll();
    const now = clock.now();
    const current = totpCode(secret, now);
    const bad = [totpCode(secret, now, -2), totpCode(secret, now, 2), wrongCode(secret, now), current.slice(0, 5), `${current}0`, 'abcdef', '12 34 5x', 'abcd-efgh-ijkl-mnop'];
    const before = await storedTotp(user.id);
    for (const code of bad) {
      // Two steps away can collide with an accepted code by chance (one in a million); skip that draw.
      if ([-1, 0, 1].some((s) => totpCode(secret, now, s) === code)) continue;
      const res = await call('POST', '/auth/mfa/totp/confirm', user, { code });
      expect(res.statusCode, code).toBe(400);
      expect(res.json().error_detail, code).toMatchObject({ error_code: 2000, detail: 'invalid one-time code' });
    }
    expect(await storedTotp(user.id)).toEqual(before);
    expect(await mfaEnabledColumn(user.id)).toBe(false);
    expect(await storedCodeHashes(user.id)).toEqual([]);
    // Spaces and hyphens are ignored: `123 456` as the app shows it.
    await expect(user.caller.auth.mfa.confirm({ code: `${current.slice(0, 3)} ${current.slice(3)}` })).resolves.toMatchObject({ recovery_codes: expect.any(Array) });
  });

  it('in both error formats', async () => {
    const user = await createUser(svc);
    const { secret } = await user.caller.auth.mfa.enroll();
    const res = await call('POST', '/auth/mfa/totp/confirm', user, { code: wrongCode(secret, clock.now()) }, PROBLEM);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 400, error_code: 2000, detail: 'invalid one-time code' });
  });

  it('nothing pending: 409/4000', async () => {
    const user = await createUser(svc);
    const res = await call('POST', '/auth/mfa/totp/confirm', user, { code: '123456' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail).toMatchObject({ error_code: 4000, detail: 'no two-factor enrollment is pending' });
  });

  it('confirmed twice: the second is 409/4000 and the recovery codes of the first stay', async () => {
    const user = await createUser(svc);
    const { secret, recoveryCodes } = await enableMfa(user, clock);
    const hashes = await storedCodeHashes(user.id);
    const res = await call('POST', '/auth/mfa/totp/confirm', user, { code: totpCode(secret, clock.now()) });
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail).toMatchObject({ error_code: 4000, detail: 'two-factor authentication is already on' });
    expect(await storedCodeHashes(user.id)).toEqual(hashes);
    expect((await login(user.username, user.password, recoveryCodes[0])).statusCode).toBe(200);
  });

  it('recovery codes are stored only as SHA-256 of the code without hyphens', async () => {
    const user = await createUser(svc);
    const { recoveryCodes } = await enableMfa(user, clock);
    const hashes = await storedCodeHashes(user.id);
    expect(hashes).toEqual(recoveryCodes.map((c) => sha256(c.replaceAll('-', ''))).sort());
    const rows = JSON.stringify(await db().selectFrom('mfa_recovery_codes').selectAll().where('userId', '=', user.id).execute());
    for (const code of recoveryCodes) {
      expect(rows).not.toContain(code);
      expect(rows).not.toContain(code.replaceAll('-', ''));
    }
  });

  it('of concurrent confirmations with the same code, exactly one turns TOTP on', async () => {
    const user = await createUser(svc);
    const { secret } = await user.caller.auth.mfa.enroll();
    const code = totpCode(secret, clock.now());
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => user.caller.auth.mfa.confirm({ code })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(await storedCodeHashes(user.id)).toHaveLength(10);
    expect(await updatedEvents(user.id)).toEqual([true]);
  });
});

describe('POST /auth/mfa/totp/disable', () => {
  it('the password and a current code: 204; TOTP off, key and codes gone, mfa_enabled false with a user.updated; login asks no code', async () => {
    const user = await createUser(svc);
    const { secret } = await enableMfa(user, clock);
    const res = await call('POST', '/auth/mfa/totp/disable', user, { password: user.password, code: totpCode(secret, clock.now()) });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await user.caller.auth.mfa.status()).toEqual({ totp_enabled: false, recovery_codes_remaining: 0, required: false });
    expect(await storedTotp(user.id)).toBeUndefined();
    expect(await storedCodeHashes(user.id)).toEqual([]);
    expect((await call('GET', `/users/${user.id}`, user)).json().data.mfa_enabled).toBe(false);
    expect(await updatedEvents(user.id)).toEqual([true, false]);
    expect((await login(user.username, user.password)).statusCode).toBe(200);
  });

  it('a recovery code in place of the TOTP code', async () => {
    const user = await createUser(svc);
    const { recoveryCodes } = await enableMfa(user, clock);
    await expect(user.caller.auth.mfa.disable({ password: user.password, code: (recoveryCodes[5] ?? '').toUpperCase() })).resolves.toBeUndefined();
    expect(await mfaEnabledColumn(user.id)).toBe(false);
  });

  it('a wrong password: 400/2000 "password is incorrect"; a wrong or used code: 400/2000 "invalid one-time code"; nothing changed', async () => {
    const user = await createUser(svc);
    const { secret, recoveryCodes } = await enableMfa(user, clock);
    await user.caller.auth.mfa.regenerateRecoveryCodes({ code: totpCode(secret, clock.now()) });
    const used = totpCode(secret, clock.now());
    const cases = [
      { password: `${user.password}x`, code: totpCode(secret, clock.now(), 1), detail: 'password is incorrect' },
      { password: user.password, code: wrongCode(secret, clock.now()), detail: 'invalid one-time code' },
      { password: user.password, code: used, detail: 'invalid one-time code' },
      // Replaced by the regeneration above.
      { password: user.password, code: recoveryCodes[0] ?? '', detail: 'invalid one-time code' },
    ];
    const before = [await storedTotp(user.id), await storedCodeHashes(user.id)];
    for (const { password, code, detail } of cases) {
      const res = await call('POST', '/auth/mfa/totp/disable', user, { password, code });
      expect(res.statusCode, detail).toBe(400);
      expect(res.json().error_detail, detail).toMatchObject({ error_code: 2000, detail });
    }
    expect([await storedTotp(user.id), await storedCodeHashes(user.id)]).toEqual(before);
    expect(await mfaEnabledColumn(user.id)).toBe(true);
  });

  it('without TOTP on (none, or only pending): 409/4000', async () => {
    const user = await createUser(svc);
    for (const pending of [false, true]) {
      if (pending) await user.caller.auth.mfa.enroll();
      const res = await call('POST', '/auth/mfa/totp/disable', user, { password: user.password, code: '123456' });
      expect(res.statusCode).toBe(409);
      expect(res.json().error_detail).toMatchObject({ error_code: 4000, detail: 'two-factor authentication is not on' });
    }
    expect(await storedTotp(user.id)).toBeDefined();
  });

  it('wrong passwords count toward the login throttle: the 11th within 15 minutes is 429/5001', async () => {
    const user = await createUser(svc);
    const { secret } = await enableMfa(user, clock);
    for (let i = 0; i < 10; i++) {
      expect((await call('POST', '/auth/mfa/totp/disable', user, { password: `wrong password ${i}`, code: '000000' })).statusCode).toBe(400);
    }
    const res = await call('POST', '/auth/mfa/totp/disable', user, { password: user.password, code: totpCode(secret, clock.now()) });
    expect(res.statusCode).toBe(429);
    expect(res.json().error_detail.error_code).toBe(5001);
    expect((await login(user.username, user.password, totpCode(secret, clock.now()))).statusCode).toBe(429);
    expect(await mfaEnabledColumn(user.id)).toBe(true);
  });
});

describe('POST /auth/mfa/recovery-codes', () => {
  it('a current code: 10 new codes; the old ones stop working and the new ones work', async () => {
    const user = await createUser(svc);
    const { secret, recoveryCodes: old } = await enableMfa(user, clock);
    const res = await call('POST', '/auth/mfa/recovery-codes', user, { code: totpCode(secret, clock.now()) });
    expect(res.statusCode).toBe(200);
    const fresh: string[] = res.json().data.recovery_codes;
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((c) => old.includes(c))).toEqual([]);
    expect((await login(user.username, user.password, old[0])).json().error_detail).toMatchObject({ error_code: 1000, detail: 'invalid one-time code' });
    expect((await login(user.username, user.password, fresh[0])).statusCode).toBe(200);
    expect((await user.caller.auth.mfa.status()).recovery_codes_remaining).toBe(9);
  });

  it('takes a TOTP code only: a recovery code is 400/2000 "invalid one-time code", nothing changed', async () => {
    const user = await createUser(svc);
    const { recoveryCodes } = await enableMfa(user, clock);
    const hashes = await storedCodeHashes(user.id);
    const res = await call('POST', '/auth/mfa/recovery-codes', user, { code: recoveryCodes[0] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail).toMatchObject({ error_code: 2000, detail: 'invalid one-time code' });
    expect(await storedCodeHashes(user.id)).toEqual(hashes);
  });

  it('TOTP off: 409/4000', async () => {
    const user = await createUser(svc);
    const res = await call('POST', '/auth/mfa/recovery-codes', user, { code: '123456' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail).toMatchObject({ error_code: 4000, detail: 'two-factor authentication is not on' });
  });
});

describe('a TOTP code is accepted once per user, wherever it is presented', () => {
  it('the code that confirmed is refused by regenerate, disable and login; the next step works', async () => {
    const user = await createUser(svc);
    const { secret } = await user.caller.auth.mfa.enroll();
    const code = totpCode(secret, clock.now());
    await user.caller.auth.mfa.confirm({ code });
    await expect(user.caller.auth.mfa.regenerateRecoveryCodes({ code })).rejects.toMatchObject({ errorCode: 2000, detail: 'invalid one-time code' });
    await expect(user.caller.auth.mfa.disable({ password: user.password, code })).rejects.toMatchObject({ errorCode: 2000, detail: 'invalid one-time code' });
    expect((await login(user.username, user.password, code)).json().error_detail).toMatchObject({ detail: 'invalid one-time code' });
    // The previous step's code, after the current one was used, is refused too.
    expect((await login(user.username, user.password, totpCode(secret, clock.now(), -1))).statusCode).toBe(401);
    expect((await login(user.username, user.password, totpCode(secret, clock.now(), 1))).statusCode).toBe(200);
  });

  it("per user: another user's use of the same step does not block it", async () => {
    const [a, b] = [await createUser(svc), await createUser(svc)];
    const [ka, kb] = [await enableMfa(a, clock), await enableMfa(b, clock)];
    expect((await login(a.username, a.password, totpCode(ka.secret, clock.now()))).statusCode).toBe(200);
    expect((await login(b.username, b.password, totpCode(kb.secret, clock.now()))).statusCode).toBe(200);
  });
});

describe('who may', () => {
  it('every auth.mfa operation answers an API key 403/1001 "not available to API keys", whatever its scopes', async () => {
    const key = await issueKey(svc, ceo, ['users:read', 'audit:read', 'events:read']);
    const calls: [Method, string, unknown?][] = [
      ['GET', '/auth/mfa'],
      ['POST', '/auth/mfa/totp/enroll'],
      ['POST', '/auth/mfa/totp/confirm', { code: '123456' }],
      ['POST', '/auth/mfa/totp/disable', { password: 'x', code: '123456' }],
      ['POST', '/auth/mfa/recovery-codes', { code: '123456' }],
    ];
    for (const [method, url, body] of calls) {
      const res = await call(method, url, key, body);
      expect(res.statusCode, url).toBe(403);
      expect(res.json().error_detail, url).toMatchObject({ error_code: 1001, detail: 'not available to API keys' });
    }
    expect(await storedTotp(ceo.id)).toBeUndefined();
  });

  it('each operation concerns the caller only: a user enrolling does not touch another', async () => {
    const [a, b] = [await createUser(svc), await createUser(svc)];
    await enableMfa(a, clock);
    expect(await b.caller.auth.mfa.status()).toMatchObject({ totp_enabled: false });
    expect(await storedTotp(b.id)).toBeUndefined();
  });
});

describe('names (CONTRACT §4.7)', () => {
  it('auth.mfa.{status, enroll, confirm, disable, regenerateRecoveryCodes} and users.resetMfa, at the paths of §3.6', () => {
    const routes = routeTable.filter((r) => r.procedurePath.startsWith('auth.mfa.') || r.procedurePath === 'users.resetMfa');
    expect(routes.map((r) => [r.procedurePath, r.method, r.openapiPath, r.meta.limits?.op]).sort()).toEqual(
      [
        ['auth.mfa.status', 'GET', '/auth/mfa', undefined],
        ['auth.mfa.enroll', 'POST', '/auth/mfa/totp/enroll', 'auth.mfa_enroll'],
        ['auth.mfa.confirm', 'POST', '/auth/mfa/totp/confirm', 'auth.mfa_confirm'],
        ['auth.mfa.disable', 'POST', '/auth/mfa/totp/disable', 'auth.mfa_disable'],
        ['auth.mfa.regenerateRecoveryCodes', 'POST', '/auth/mfa/recovery-codes', 'auth.mfa_recovery_codes'],
        ['users.resetMfa', 'DELETE', '/users/{user_id}/mfa', 'users.reset_mfa'],
      ].sort(),
    );
    for (const op of ['auth.mfa_enroll', 'auth.mfa_confirm', 'auth.mfa_disable', 'auth.mfa_recovery_codes', 'users.reset_mfa'] as const) {
      expect(OPERATION_POLICIES[op], op).toMatchObject({ limit: 10, window_s: 60, subject: 'user' });
    }
  });
});

describe('the audit log (CONTRACT §4.13)', () => {
  it('records mfa.enabled, mfa.recovery_codes_regenerated and mfa.disabled, with no code, key or hash in them', async () => {
    const user = await createUser(svc);
    const { secret, recoveryCodes } = await enableMfa(user, clock);
    const { recovery_codes: fresh } = await user.caller.auth.mfa.regenerateRecoveryCodes({ code: totpCode(secret, clock.now()) });
    await user.caller.auth.mfa.disable({ password: user.password, code: fresh[1] ?? '' });
    const entries = (await auditRows(svc, { targetId: user.id })).filter((e) => e.type.startsWith('mfa.'));
    expect(entries.map((e) => [e.type, e.actor, e.targetType, e.data])).toEqual([
      ['mfa.enabled', user.username, 'user', { username: user.username }],
      ['mfa.recovery_codes_regenerated', user.username, 'user', { username: user.username }],
      ['mfa.disabled', user.username, 'user', { username: user.username, code_kind: 'recovery_code' }],
    ]);
    const all = JSON.stringify(await auditRows(svc, { targetId: user.id }));
    for (const secretText of [secret, ...recoveryCodes, ...fresh, user.password]) expect(all).not.toContain(secretText);
  });
});
