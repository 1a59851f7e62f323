// npm run admin -- reset-mfa <username> (CONTRACT §3.6): an operator turns a user's two-factor authentication off.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { auditRows } from './helpers/audit.ts';
import { enableMfa, manualClock } from './helpers/mfa.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const root = path.resolve(import.meta.dirname, '..');
const nodeBin = path.join(root, 'node_modules', '.bin', 'node');

type Outcome = { code: number; stdout: string; stderr: string };

/** Runs the real `scripts/admin.ts` (what `npm run admin --` runs) against the test database. */
function admin(args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    const options = { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: svc.databaseUrl }, timeout: 60_000 };
    execFile(nodeBin, ['scripts/admin.ts', ...args], options, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

const clock = manualClock();
let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' }, clock });
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

const db = () => kysely(svc.deps.orm.em.fork());
const state = async (userId: string) => ({
  enabled: (await db().selectFrom('users').select('mfaEnabled').where('id', '=', userId).executeTakeFirstOrThrow()).mfaEnabled,
  keys: (await db().selectFrom('user_totp').select('userId').where('userId', '=', userId).execute()).length,
  codes: (await db().selectFrom('mfa_recovery_codes').select('userId').where('userId', '=', userId).execute()).length,
});
const login = (username: string, password: string) => svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });

describe('npm run admin -- reset-mfa <username>', () => {
  it("turns the CEO's two-factor authentication off (typed in any case): the password alone signs in, sessions stay, recorded as admin.reset-mfa", async () => {
    await enableMfa(ceo, clock);
    expect((await login(ceo.username, ceo.password)).json().error_detail.detail).toBe('one-time code required');
    const out = await admin(['reset-mfa', ceo.username.toUpperCase()]);
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe(`two-factor authentication of ${ceo.username} is off: they sign in with the password alone and may enroll again`);
    expect(await state(ceo.id)).toEqual({ enabled: false, keys: 0, codes: 0 });
    expect((await login(ceo.username, ceo.password)).statusCode).toBe(200);
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: ceo.headers })).json().data.mfa_enabled).toBe(false);
    const entries = await auditRows(svc, { type: 'admin.reset-mfa', targetId: ceo.id });
    expect(entries.map((e) => [e.actor, e.actorType, e.data.username])).toEqual([[null, 'admin', ceo.username]]);
    expect((await auditRows(svc, { type: 'user.updated', targetId: ceo.id })).at(-1)?.actorType).toBe('admin');
  });

  it('a user without it on: a one-line error, exit 1, nothing changed', async () => {
    const user = await createUser(svc);
    await user.caller.auth.mfa.enroll();
    const out = await admin(['reset-mfa', user.username]);
    expect(out.code).toBe(1);
    expect(out.stderr.trim().split('\n')).toEqual([`admin: ${user.username} does not have two-factor authentication on`]);
    expect(out.stdout).toBe('');
    expect(await state(user.id)).toEqual({ enabled: false, keys: 1, codes: 0 });
  });

  it('an unknown user: a one-line error, exit 1; a missing argument: usage, exit 2', async () => {
    const unknown = await admin(['reset-mfa', 'nobody-by-that-name']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split('\n')).toEqual(['admin: no user named "nobody-by-that-name"']);
    const missing = await admin(['reset-mfa']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('reset-mfa <username>');
  });
});
