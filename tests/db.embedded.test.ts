import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const nodeBin = path.join(root, 'node_modules', '.bin', 'node');
const quiet = { debug: () => {}, info: () => {}, warn: () => {} };

let dir: string;
// One data directory for every test: each works whether or not an earlier one initialised it, and initdb runs once.
let dataDir: string;
const started: EmbeddedDatabase[] = [];
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-embedded-'));
  // mkdtemp makes 0700; as root the server runs as the `postgres` user and must reach its data dir.
  await fs.chmod(dir, 0o755);
  dataDir = path.join(dir, 'data', 'pg');
});
afterAll(async () => {
  for (const server of started) await server.stop().catch(() => undefined);
  await fs.rm(dir, { recursive: true, force: true });
});

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ one: number }>('select 1 as one');
    return rows[0]?.one ?? 0;
  } finally {
    await client.end();
  }
}

function postmasterPid(): Promise<number> {
  return fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8').then((text) => Number(text.split('\n')[0]));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs a service-like process that starts the embedded server and then dies by SIGKILL, leaving the postmaster behind. */
async function crashAfterStart(): Promise<void> {
  const script = path.join(dir, 'start-then-hang.ts');
  await fs.writeFile(
    script,
    `import { startEmbeddedPostgres } from ${JSON.stringify(path.join(root, 'src/db/embedded.ts'))};\n` +
      `const quiet = { debug: () => {}, info: () => {}, warn: () => {} };\n` +
      `await startEmbeddedPostgres(${JSON.stringify(dataDir)}, quiet);\n` +
      `console.log('started');\n` +
      `setInterval(() => {}, 1000);\n`,
  );
  const child = spawn(nodeBin, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('started')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`the child exited early (${String(code)})`)));
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('the embedded PostgreSQL', () => {
  it('initialises and starts in a fresh DATA_DIR', async () => {
    const server = await startEmbeddedPostgres(dataDir, quiet);
    started.push(server);
    expect(existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(true);
    expect(await selectOne(server.url)).toBe(1);
    await server.stop();
    expect(existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);
  });

  it('starts again after the service was killed with SIGKILL and left a stale postmaster behind', async () => {
    await crashAfterStart();
    const orphan = await postmasterPid();
    expect(alive(orphan)).toBe(true);

    const server = await startEmbeddedPostgres(dataDir, quiet);
    started.push(server);
    expect(alive(orphan)).toBe(false);
    expect(await selectOne(server.url)).toBe(1);
    expect(await postmasterPid()).not.toBe(orphan);
    await server.stop();
  });

  it('restarts on the same port when asked, so existing connection strings keep working', async () => {
    const first = await startEmbeddedPostgres(dataDir, quiet);
    started.push(first);
    const port = Number(new URL(first.url).port);
    await first.stop();
    const second = await startEmbeddedPostgres(dataDir, quiet, { port });
    started.push(second);
    expect(second.url).toBe(first.url);
    expect(await selectOne(second.url)).toBe(1);
    await second.stop();
  });
});

/** Whether a connection made with `url` came over a Unix-domain socket (PostgreSQL sees no client address then). */
async function viaSocket(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ addr: string | null }>('select inet_client_addr() as addr');
    return rows[0]?.addr === null;
  } finally {
    await client.end();
  }
}

describe('how the service reaches the embedded PostgreSQL', () => {
  it('is a Unix-domain socket in the cluster directory; TCP on 127.0.0.1 stays open for tools', async () => {
    const server = await startEmbeddedPostgres(dataDir, quiet);
    started.push(server);
    try {
      const url = new URL(server.url);
      const socketDir = decodeURIComponent(url.hostname);
      expect(path.isAbsolute(socketDir)).toBe(true);
      expect(existsSync(path.join(socketDir, `.s.PGSQL.${url.port}`))).toBe(true);
      expect(await viaSocket(server.url)).toBe(true);
      url.hostname = '127.0.0.1';
      expect(await viaSocket(url.toString())).toBe(false);
    } finally {
      await server.stop();
    }
  });

  it('is TCP alone when the socket path would pass the kernel’s 107-byte limit', async () => {
    const deep = path.join(dir, 'a'.repeat(100), 'pg');
    const server = await startEmbeddedPostgres(deep, quiet);
    started.push(server);
    try {
      expect(new URL(server.url).hostname).toBe('127.0.0.1');
      expect(await viaSocket(server.url)).toBe(false);
    } finally {
      await server.stop();
    }
  });
});

describe('a password file that does not open its cluster (one of the two replaced by hand)', () => {
  it('fails to start with an error naming both, and leaves no server running', async () => {
    const own = path.join(dir, 'mismatched', 'pg');
    const first = await startEmbeddedPostgres(own, quiet);
    await first.stop();
    await fs.writeFile(`${own}.password`, 'not-the-password-of-this-cluster');
    await expect(startEmbeddedPostgres(own, quiet)).rejects.toThrow(/password in .*mismatched\/pg\.password does not open the embedded PostgreSQL cluster/);
    const clusterDir = await fs.realpath(own);
    expect(existsSync(path.join(clusterDir, 'postmaster.pid'))).toBe(false);
  });
});
