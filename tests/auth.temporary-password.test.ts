// CONTRACT §3.7 (rev. 3): a temporary password (set by the CEO at creation) expires after TEMP_PASSWORD_TTL_S.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../src/contracts/clock.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const TTL_S = 3600;

/** Stands still until a test moves it; each test starts at real time (lucia dates new sessions by the real clock). */
const clock = { ms: Date.now(), now: (): Date => new Date(clock.ms) } satisfies Clock & { ms: number };
beforeEach(() => {
  clock.ms = Date.now();
});

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  svc = await startTestService({ clock, env: { RATE_LIMITS_ENABLED: 'false', TEMP_PASSWORD_TTL_S: String(TTL_S) } });
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

let counter = 0;
/** A user the CEO creates now over HTTP, with a temporary password. */
async function created(): Promise<{ username: string; password: string; createdAt: number }> {
  const username = `newcomer_${String(++counter)}_${Math.random().toString(36).slice(2, 6)}`;
  const password = 'a temporary passphrase';
  const createdAt = clock.ms;
  const res = await svc.app.inject({ method: 'POST', url: '/api/v1/users', headers: ceo.headers, payload: { username, password, role: 'observer' } });
  expect(res.statusCode).toBe(201);
  return { username, password, createdAt };
}

const login = (username: string, password: string) =>
  svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: PROBLEM, payload: { username, password } });

describe('a temporary password expires TEMP_PASSWORD_TTL_S after it was set', () => {
  it('signs in up to the last millisecond of its lifetime', async () => {
    const user = await created();
    clock.ms = user.createdAt + TTL_S * 1000 - 1;
    const res = await login(user.username, user.password);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.user.must_change_password).toBe(true);
  });

  it('then, correct but expired, is 401/1000 "temporary password has expired" and issues no session', async () => {
    const user = await created();
    clock.ms = user.createdAt + TTL_S * 1000;
    const res = await login(user.username, user.password);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000, detail: 'temporary password has expired' });
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('a wrong password after the expiry gets the ordinary answer: the expiry is told only to who knows the password', async () => {
    const user = await created();
    clock.ms = user.createdAt + TTL_S * 1000 + 5000;
    const res = await login(user.username, 'not the temporary one');
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000, detail: 'invalid username or password' });
  });

  it('a password the user chose never expires', async () => {
    const user = await created();
    const signedIn = await login(user.username, user.password);
    const token = signedIn.cookies.find((c) => c.name === 'session')?.value ?? '';
    const chosen = 'a passphrase of my own';
    const changed = await svc.app.inject({
      method: 'POST',
      url: '/api/v1/auth/change-password',
      headers: { authorization: `Bearer ${token}` },
      payload: { current_password: user.password, new_password: chosen },
    });
    expect(changed.statusCode).toBe(200);
    clock.ms = user.createdAt + 10 * TTL_S * 1000;
    expect((await login(user.username, chosen)).statusCode).toBe(200);
  });

  it('the first-run CEO\'s password is not temporary', async () => {
    const fresh = await startTestService({ clock, env: { RATE_LIMITS_ENABLED: 'false', TEMP_PASSWORD_TTL_S: String(TTL_S) } });
    try {
      const setup = await fresh.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: { username: 'founder', password: 'correct horse battery staple' } });
      expect(setup.statusCode).toBe(201);
      clock.ms += 10 * TTL_S * 1000;
      const res = await fresh.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'founder', password: 'correct horse battery staple' } });
      expect(res.statusCode).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});
