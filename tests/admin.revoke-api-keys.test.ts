// npm run admin -- revoke-api-keys <username> (CONTRACT §3.5), and reset-password refusing a service account.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { createServiceAccount, issueKey } from './helpers/apiKeys.ts';
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

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

const status = async (headers: Record<string, string>) => (await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers })).statusCode;

describe('npm run admin -- revoke-api-keys <username>', () => {
  it("revokes every key of that user and only theirs; the user's sessions stay", async () => {
    const user = await createUser(svc, { role: 'manager' });
    const keys = [await issueKey(svc, user, ['users:read']), await issueKey(svc, user, ['approvals:read'])];
    const bystander = await issueKey(svc, ceo, ['users:read']);
    const out = await admin(['revoke-api-keys', user.username.toUpperCase()]);
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe(`revoked 2 API key(s) of ${user.username}`);
    for (const key of keys) expect(await status(key.headers)).toBe(401);
    const me = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: keys[0]!.headers });
    expect(me.json().error_detail.error_code).toBe(1002);
    expect(await status(bystander.headers)).toBe(200);
    expect(await status(user.headers)).toBe(200);
    // Again: nothing left to revoke.
    expect((await admin(['revoke-api-keys', user.username])).stdout.trim()).toBe(`revoked 0 API key(s) of ${user.username}`);
  });

  it("a service account's keys", async () => {
    const bot = await createServiceAccount(ceo);
    const key = await issueKey(svc, ceo, ['users:read'], { userId: bot.id });
    const out = await admin(['revoke-api-keys', bot.username]);
    expect(out.code).toBe(0);
    expect(await status(key.headers)).toBe(401);
  });

  it('an unknown user: a one-line error, exit 1, nothing changed', async () => {
    const key = await issueKey(svc, ceo, ['users:read']);
    const before = await kysely(svc.deps.orm.em.fork()).selectFrom('api_keys').select(['id', 'revokedAt']).orderBy('id').execute();
    const out = await admin(['revoke-api-keys', 'nobody-by-that-name']);
    expect(out.code).toBe(1);
    expect(out.stderr.trim().split('\n')).toEqual(['admin: no user named "nobody-by-that-name"']);
    expect(out.stdout).toBe('');
    expect(await kysely(svc.deps.orm.em.fork()).selectFrom('api_keys').select(['id', 'revokedAt']).orderBy('id').execute()).toEqual(before);
    expect(await status(key.headers)).toBe(200);
  });

  it('a missing or extra argument: usage on one line, exit 2', async () => {
    for (const args of [['revoke-api-keys'], ['revoke-api-keys', 'a', 'b']]) {
      const out = await admin(args);
      expect(out.code).toBe(2);
      expect(out.stderr.trim().split('\n')).toHaveLength(1);
      expect(out.stderr).toContain('revoke-api-keys <username>');
    }
  });
});

describe('npm run admin -- reset-password for a service account', () => {
  it('is refused in one line with exit 1 (a program has no password), changing nothing', async () => {
    const bot = await createServiceAccount(ceo);
    const out = await admin(['reset-password', bot.username]);
    expect(out.code).toBe(1);
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toContain('service account');
    const row = await kysely(svc.deps.orm.em.fork()).selectFrom('users').select(['passwordHash', 'mustChangePassword']).where('id', '=', bot.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ passwordHash: null, mustChangePassword: false });
  });
});
