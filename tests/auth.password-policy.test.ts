// CONTRACT §3.7 (rev. 3) passwords: never a common one, never one containing the username, on every path that sets one.
import { dictionary } from '@zxcvbn-ts/language-common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_PASSWORD_LENGTH } from '../src/contracts/passwords.ts';
import { kysely } from '../src/db/kysely.ts';
import { ApiError } from '../src/errors.ts';
import { assertPasswordPolicy } from '../src/services/auth/passwords.ts';
import { usernameKey } from '../src/services/auth/usernameKeys.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

// The per-operation windows are the limiter's tests, not these.
const ENV = { RATE_LIMIT_STORE: 'memory', RATE_LIMITS_ENABLED: 'false' };
const FINE = 'a perfectly fine password';
const TOO_COMMON = 'password is too common';
const CONTAINS_USERNAME = 'password must not contain the username';

/** The detail assertPasswordPolicy refuses with, or null when it accepts. */
function refusal(password: string, username: string): string | null {
  try {
    assertPasswordPolicy(password, username);
    return null;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    expect(error.errorCode).toBe(2000);
    return error.message;
  }
}

describe('the common-password list', () => {
  const listed = dictionary['passwords-common'];

  it('comes from a maintained package and holds at least 10,000 passwords, password1234 and qwertyuiop12 among them', () => {
    expect(listed.length).toBeGreaterThanOrEqual(10_000);
    expect(listed).toContain('password1234');
    expect(listed).toContain('qwertyuiop12');
  });

  it('refuses every listed password long enough to reach the policy, in any case', () => {
    const reachable = listed.filter((p) => p.length >= MIN_PASSWORD_LENGTH && p.trim() !== '');
    expect(reachable.length).toBeGreaterThan(100);
    for (const password of reachable) {
      expect(refusal(password, 'someone'), password).toBe(TOO_COMMON);
      expect(refusal(password.toUpperCase(), 'someone'), password).toBe(TOO_COMMON);
    }
  });

  it('lets a password that is not listed through', () => {
    expect(refusal(FINE, 'someone')).toBeNull();
    expect(refusal('password1234 but longer', 'someone')).toBeNull();
  });
});

describe('the username rule', () => {
  it('refuses a password containing a username of 4 or more characters, ignoring case', () => {
    expect(refusal('my name is Mallory, ok', 'mallory')).toBe(CONTAINS_USERNAME);
    expect(refusal('xxDAVExx-2026!', 'Dave')).toBe(CONTAINS_USERNAME);
  });

  it('lets a username of fewer than 4 characters appear in the password', () => {
    expect(refusal('bob builds bridges', 'Bob')).toBeNull();
  });

  it('keeps the earlier rules first: whitespace only, then equal to the username', () => {
    expect(refusal(' '.repeat(14), 'someone')).toBe('password must not be only whitespace');
    expect(refusal('Password1234', 'password1234')).toBe('password must not equal the username');
  });
});

describe('on every path that sets a password', () => {
  describe('first-run setup', () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService({ env: ENV });
    });
    afterAll(() => svc.close());
    const setup = (username: string, password: string) =>
      svc.app.inject({ method: 'POST', url: '/api/v1/auth/setup', headers: PROBLEM, payload: { username, password } });

    it('a common password is 400/2000 "password is too common", and no CEO is created', async () => {
      const res = await setup('founder', 'Password1234');
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, error_code: 2000, detail: TOO_COMMON });
      expect(res.headers['set-cookie']).toBeUndefined();
    });

    it('a password containing the username is 400/2000, and no CEO is created', async () => {
      const res = await setup('Founder', 'the founder of it all');
      expect(res.json()).toMatchObject({ status: 400, error_code: 2000, detail: CONTAINS_USERNAME });
    });

    it('the refusals left first-run setup undone', async () => {
      const status = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'founder', password: 'Password1234' } });
      expect(status.statusCode).toBe(409);
    });
  });

  describe('user creation by the CEO and password change', () => {
    let svc: TestService;
    let ceo: TestUser;
    beforeAll(async () => {
      svc = await startTestService({ env: ENV });
      ceo = await createUser(svc, { role: 'ceo' });
    });
    afterAll(() => svc.close());

    const create = (username: string, password: string) =>
      svc.app.inject({ method: 'POST', url: '/api/v1/users', headers: { ...ceo.headers, ...PROBLEM }, payload: { username, password, role: 'observer' } });
    const exists = async (username: string) =>
      (await kysely(svc.deps.orm.em.fork()).selectFrom('users').select('id').where('usernameKey', '=', usernameKey(username)).executeTakeFirst()) !== undefined;

    it.each([
      ['a common password', 'newcomer1', 'qwertyuiop12', TOO_COMMON],
      ['a common password in capitals', 'newcomer2', 'QWERTYUIOP12', TOO_COMMON],
      ['a password containing the username', 'Newcomer3', 'hello newcomer3 here', CONTAINS_USERNAME],
    ])('POST /users with %s is 400/2000 and creates nobody', async (_label, username, password, detail) => {
      const res = await create(username, password);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error_code: 2000, detail });
      expect(await exists(username)).toBe(false);
    });

    it('POST /users with a short name inside the password is created (201)', async () => {
      expect((await create('Ann', 'ann wrote this one')).statusCode).toBe(201);
    });

    it('length errors still come first (400/2001), before the list is consulted', async () => {
      const res = await create('newcomer4', 'password123');
      expect(res.json()).toMatchObject({ status: 400, error_code: 2001 });
    });

    it.each([
      ['a common password', 'password1234', TOO_COMMON],
      ['a password containing the username', null, CONTAINS_USERNAME],
    ])('POST /auth/change-password to %s is 400/2000 and the password stays', async (_label, newPassword, detail) => {
      const user = await createUser(svc);
      const res = await svc.app.inject({
        method: 'POST',
        url: '/api/v1/auth/change-password',
        headers: { ...user.headers, ...PROBLEM },
        payload: { current_password: user.password, new_password: newPassword ?? `${user.username.toUpperCase()} forever` },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error_code: 2000, detail });
      expect(res.headers['set-cookie']).toBeUndefined();
      const login = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: user.password } });
      expect(login.statusCode).toBe(200);
    });
  });
});
