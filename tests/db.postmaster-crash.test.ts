// CONTRACT §1: an embedded postmaster that dies is started again (readyz recovers by itself); if it cannot be, the process exits non-zero.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.ts';
import { createLogger } from '../src/logger.ts';
import { freePort } from '../src/net/freePort.ts';
import { createService, type Service } from '../src/service.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const nodeBin = path.join(root, 'node_modules', '.bin', 'node');
const quiet = { debug: () => {}, info: () => {}, warn: () => {} };

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-crash-'));
  // mkdtemp makes 0700; as root the server runs as the `postgres` user and must reach its data dir.
  await fs.chmod(dir, 0o755);
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a running service whose embedded postmaster is killed with SIGKILL', () => {
  let service: Service;
  let dataDir: string;
  beforeAll(async () => {
    const dataRoot = path.join(dir, 'service');
    dataDir = path.join(dataRoot, 'pg');
    const config = loadConfig({ DATA_DIR: dataRoot, LOG_LEVEL: 'silent', RATE_LIMITS_ENABLED: 'false', PUBLIC_URL: 'http://agent-org.test' });
    service = await createService(config, createLogger(config.logLevel));
  });
  afterAll(async () => {
    await service.close();
  });

  it('starts it again: readyz returns to 200 by itself, and meanwhile every request gets 200 or 503/8001', async () => {
    const killed = await postmasterPid(dataDir);
    process.kill(killed, 'SIGKILL');
    const started = Date.now();
    let recovered = false;
    while (!recovered && Date.now() - started < 30_000) {
      const answers = await Promise.all([
        service.app.inject({ method: 'GET', url: '/api/v1/readyz' }),
        ...Array.from({ length: 4 }, () => service.app.inject({ method: 'GET', url: '/api/v1/setup/status' })),
      ]);
      for (const res of answers) {
        if (res.statusCode !== 200) {
          expect(res.statusCode, res.body).toBe(503);
          expect(res.json()).toMatchObject({ error_detail: { error_code: 8001, retryable: true } });
        }
      }
      recovered = answers.every((res) => res.statusCode === 200);
      if (!recovered) await sleep(100);
    }
    expect(recovered, 'readyz back to 200 within 30 s').toBe(true);
    expect(alive(killed)).toBe(false);
    expect(await postmasterPid(dataDir)).not.toBe(killed);
  });
});

describe('the embedded server after its postmaster died', () => {
  it('stops at once instead of waiting for the dead process', async () => {
    const server = await startEmbeddedPostgres(path.join(dir, 'stop', 'pg'), quiet);
    process.kill(await postmasterPid(path.join(dir, 'stop', 'pg')), 'SIGKILL');
    const started = Date.now();
    await server.stop();
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('reports a failure when it cannot be started again', async () => {
    const dataDir = path.join(dir, 'broken', 'pg');
    const server: EmbeddedDatabase = await startEmbeddedPostgres(dataDir, quiet, { restartAttempts: 2 });
    try {
      // A data directory PostgreSQL no longer recognises: the running server does not care, a new one refuses.
      await fs.rm(path.join(dataDir, 'PG_VERSION'));
      process.kill(await postmasterPid(dataDir), 'SIGKILL');
      const failure = await Promise.race([server.failure, sleep(15_000).then(() => null)]);
      expect(failure?.message).toMatch(/could not be started again/);
    } finally {
      await server.stop();
    }
  });
});

describe('the process (src/main.ts) when its database is gone for good', () => {
  it('stops and exits non-zero, so a supervisor restarts it', { timeout: 90_000 }, async () => {
    const dataRoot = path.join(dir, 'process');
    const port = await freePort();
    const child = spawn(nodeBin, ['src/main.ts'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataRoot, PORT: String(port), LOG_LEVEL: 'warn', RATE_LIMITS_ENABLED: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const started = Date.now();
      while ((await fetch(`http://127.0.0.1:${port}/api/v1/readyz`).then((r) => r.status, () => 0)) !== 200) {
        if (Date.now() - started > 40_000) throw new Error(`the service did not become ready:\n${output}`);
        await sleep(200);
      }
      const dataDir = path.join(dataRoot, 'pg');
      const pid = await postmasterPid(dataDir);
      await fs.rm(path.join(dataDir, 'PG_VERSION'));
      process.kill(pid, 'SIGKILL');
      const code = await Promise.race([exited, sleep(60_000).then(() => 'still running')]);
      expect(code, output).toBe(1);
      expect(output).toMatch(/the embedded database is gone/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
