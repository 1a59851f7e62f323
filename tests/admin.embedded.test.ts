// npm run admin on the embedded database (CONTRACT §4.10): beside a running service it reaches that service's PostgreSQL; with none running it starts one for itself.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.ts';
import { systemClock } from '../src/contracts/clock.ts';
import { createLogger } from '../src/logger.ts';
import { createService, type Service } from '../src/service.ts';
import { createAccount } from '../src/services/auth/accounts.ts';

const root = path.resolve(import.meta.dirname, '..');
const nodeBin = path.join(root, 'node_modules', '.bin', 'node');

type Outcome = { code: number; stdout: string; stderr: string };

/** Runs the real `scripts/admin.ts` (what `npm run admin --` runs) with only the given configuration. */
function admin(args: string[], env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve) => {
    const options = { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: 90_000 };
    execFile(nodeBin, ['scripts/admin.ts', ...args], options, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

let dataDir: string;
let config: Config;
let service: Service | null = null;
const ceo = { username: `ceo_${Date.now()}`, password: 'the-ceo-password-before' };

/** The service as `npm start` runs it on this DATA_DIR: its own embedded PostgreSQL. */
async function runningService(): Promise<Service> {
  service ??= await createService(config, createLogger('silent'));
  return service;
}

async function stoppedService(): Promise<void> {
  await service?.close();
  service = null;
}

function postmasterPid(): Promise<number | null> {
  return fs.readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').then(
    (text) => Number(text.split('\n')[0]),
    () => null,
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'admin-embedded-'));
  // mkdtemp makes 0700; as root the server runs as the `postgres` user and must reach its data dir.
  await fs.chmod(dataDir, 0o755);
  config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PUBLIC_URL: 'http://agent-org.test' });
  const svc = await runningService();
  await svc.deps.orm.em.fork().transactional((tx) => createAccount({ em: tx, clock: systemClock }, { ...ceo, role: 'ceo', mustChangePassword: false }));
});
afterAll(async () => {
  await stoppedService();
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe('npm run admin on the embedded database', () => {
  it('works while the service runs, on the service’s own PostgreSQL, and the service goes on serving', async () => {
    const svc = await runningService();
    const pid = await postmasterPid();
    expect(pid).not.toBeNull();

    const listed = await admin(['list-users'], { DATA_DIR: dataDir });
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${ceo.username}\\s+ceo\\s`, 'm'));

    const reset = await admin(['reset-password', ceo.username], { DATA_DIR: dataDir });
    expect(reset.code, reset.stderr).toBe(0);
    const temporary = /temporary password for (\S+): (\S+)/.exec(reset.stdout)?.[2] ?? '';

    // The running service sees the reset at once: it is the same database.
    const login = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: ceo.username, password: temporary } });
    expect(login.statusCode, login.body).toBe(200);
    expect(login.json().data.must_change_password).toBe(true);
    // Its PostgreSQL is the one it started, still running.
    expect(await postmasterPid()).toBe(pid);
    expect(alive(pid ?? 0)).toBe(true);
  });

  it('with no service running, starts the embedded PostgreSQL for itself and stops it when done', async () => {
    await stoppedService();
    expect(await postmasterPid()).toBeNull();

    const listed = await admin(['list-users'], { DATA_DIR: dataDir });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${ceo.username}\\s+ceo\\s`, 'm'));
    expect(await postmasterPid()).toBeNull();

    // And the service starts again afterwards on the same data.
    const svc = await runningService();
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/readyz' })).statusCode).toBe(200);
  });
});
