import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertPasswordPolicy } from '../src/services/auth/passwords.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const root = path.resolve(import.meta.dirname, '..');
const nodeBin = path.join(root, 'node_modules', '.bin', 'node');

type Outcome = { code: number; stdout: string; stderr: string };

/** Runs the real `scripts/admin.ts` (what `npm run admin --` runs) with only the given configuration. */
function admin(args: string[], env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve) => {
    const options = { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: 60_000 };
    execFile(nodeBin, ['scripts/admin.ts', ...args], options, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

let svc: TestService;
let ceo: TestUser;
const onDb = () => ({ DATABASE_URL: svc.databaseUrl });
beforeAll(async () => {
  svc = await startTestService();
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

async function status(user: TestUser): Promise<number> {
  return (await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers })).statusCode;
}

async function login(username: string, password: string) {
  return svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
}

describe('npm run admin -- reset-password <username>', () => {
  it('prints a generated temporary password once, requires a new one at sign-in and revokes every session', async () => {
    const user = await createUser(svc, { role: 'manager' });
    const bystander = await createUser(svc);
    const out = await admin(['reset-password', user.username], onDb());
    expect(out.code).toBe(0);
    const password = /temporary password for (\S+): (\S+)/.exec(out.stdout)?.[2] ?? '';
    expect(password.length).toBeGreaterThanOrEqual(12);
    expect(out.stdout.split(password)).toHaveLength(2);
    expect(out.stdout).toContain('1 session(s) revoked');

    const me = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers });
    expect(me.statusCode).toBe(401);
    expect(me.json().error_detail.error_code).toBe(1002);
    expect(await status(bystander)).toBe(200);
    expect((await login(user.username, user.password)).statusCode).toBe(401);
    const signIn = await login(user.username, password);
    expect(signIn.statusCode).toBe(200);
    expect(signIn.json().data.must_change_password).toBe(true);
  });

  it('finds the user by the name as it is signed in with (case and width folded)', async () => {
    const user = await createUser(svc, { username: `Recover_${Date.now()}` });
    const out = await admin(['reset-password', user.username.toUpperCase()], onDb());
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`temporary password for ${user.username}:`);
  });

  it('an unknown user: a one-line error, exit 1, nothing changed', async () => {
    const out = await admin(['reset-password', 'nobody-by-that-name'], onDb());
    expect(out.code).toBe(1);
    expect(out.stderr.trim().split('\n')).toEqual(['admin: no user named "nobody-by-that-name"']);
    expect(out.stdout).toBe('');
    expect(await status(ceo)).toBe(200);
  });
});

describe('npm run admin -- reset-password: the temporary password (CONTRACT §3.7)', () => {
  it('meets the password policy and expires TEMP_PASSWORD_TTL_S after the reset', async () => {
    const user = await createUser(svc, { username: `Temp_${Date.now()}` });
    const out = await admin(['reset-password', user.username], onDb());
    expect(out.code).toBe(0);
    const password = /temporary password for (\S+): (\S+)/.exec(out.stdout)?.[2] ?? '';
    expect(() => assertPasswordPolicy(password, user.username)).not.toThrow();

    // Another instance on the same database whose clock is past the lifetime.
    const ttlS = 60;
    const later = await startTestService({ databaseUrl: svc.databaseUrl, env: { TEMP_PASSWORD_TTL_S: String(ttlS) }, clock: { now: () => new Date(Date.now() + ttlS * 1000) } });
    try {
      const expired = await later.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { accept: 'application/problem+json' }, payload: { username: user.username, password } });
      expect(expired.json()).toMatchObject({ status: 401, error_code: 1000, detail: 'temporary password has expired' });
    } finally {
      await later.close();
    }
    expect((await login(user.username, password)).statusCode).toBe(200);
  });
});

describe('npm run admin -- revoke-sessions <username>', () => {
  it('revokes every session of that user and only theirs', async () => {
    const user = await createUser(svc);
    const second = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: user.password } });
    expect(second.statusCode).toBe(200);
    const bystander = await createUser(svc);
    const out = await admin(['revoke-sessions', user.username], onDb());
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe(`revoked 2 session(s) of ${user.username}`);
    expect(await status(user)).toBe(401);
    expect(await status(bystander)).toBe(200);
    // The password still works: only the sessions ended.
    expect((await login(user.username, user.password)).statusCode).toBe(200);
  });

  it('an unknown user: exit 1 and a one-line error', async () => {
    const out = await admin(['revoke-sessions', 'ghost-user'], onDb());
    expect(out.code).toBe(1);
    expect(out.stderr.trim()).toBe('admin: no user named "ghost-user"');
  });
});

describe('npm run admin -- list-users', () => {
  it('prints a table of every user with role, the password flag and live sessions', async () => {
    const pending = await createUser(svc, { role: 'pair_programmer', mustChangePassword: true });
    const out = await admin(['list-users'], onDb());
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^USERNAME\s+ROLE\s+MUST CHANGE PASSWORD\s+LIVE SESSIONS\s+CREATED$/);
    expect(lines.find((l) => l.startsWith(`${ceo.username} `))).toMatch(new RegExp(`^${ceo.username}\\s+ceo\\s+no\\s+\\d+\\s+\\d{4}-`));
    expect(lines.find((l) => l.startsWith(`${pending.username} `))).toMatch(/\s+pair_programmer\s+yes\s+1\s+/);
  });
});

describe('npm run admin: bad command lines and databases', () => {
  it('an unknown command or missing argument: usage on one line, exit 2, database untouched', async () => {
    const outcomes = await Promise.all([['frobnicate'], ['reset-password'], ['list-users', 'extra'], []].map((args) => admin(args, onDb())));
    for (const out of outcomes) {
      expect(out.code).toBe(2);
      expect(out.stderr.trim().split('\n')).toHaveLength(1);
      expect(out.stderr).toContain('usage: npm run admin -- reset-password <username> | list-users | revoke-sessions <username>');
    }
    expect(await status(ceo)).toBe(200);
  });

  it('no database (an empty DATA_DIR, no DATABASE_URL): exit 1, and no database is created', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'admin-empty-'));
    try {
      const out = await admin(['list-users'], { DATA_DIR: dataDir });
      expect(out.code).toBe(1);
      expect(out.stderr.trim()).toBe(`admin: no database: ${path.join(dataDir, 'pg')} holds no embedded PostgreSQL (set DATA_DIR to the service's, or DATABASE_URL)`);
      expect(await fs.readdir(dataDir)).toEqual([]);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('a DATABASE_URL nothing answers, or one that is not a postgres URL: a one-line error and exit 1', async () => {
    const unreachable = await admin(['list-users'], { DATABASE_URL: 'postgresql://nobody:secret@127.0.0.1:1/none' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr.trim()).toMatch(/^admin: cannot open the database: .*ECONNREFUSED[^\n]*$/);
    expect(unreachable.stderr).not.toContain('secret');
    const malformed = await admin(['list-users'], { DATABASE_URL: 'mysql://x@y/z' });
    expect(malformed.code).toBe(1);
    expect(malformed.stderr.trim()).toBe('admin: invalid configuration: DATABASE_URL: must be a postgres:// URL');
  });
});
