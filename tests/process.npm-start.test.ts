// CONTRACT §1 and §2.4 (rev. 2): `npm start` is the real entry: it starts as root from a private checkout, and a
// SIGTERM sent to the npm process alone (what a process manager or container runtime does) stops everything.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../src/net/freePort.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const isRoot = process.getuid?.() === 0;
const cleanups: (() => Promise<void>)[] = [];

// Last registered runs first: processes are stopped before their directories go.
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

type Started = { npm: ChildProcess; port: number; dataDir: string; output: () => string; exited: Promise<number | null> };

/** `npm start` in `cwd` with an embedded database in `dataDir`, once readyz answers 200. */
async function npmStart(cwd: string, dataDir: string): Promise<Started> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', RATE_LIMITS_ENABLED: 'false' };
  delete env.DATABASE_URL;
  const npm = spawn('npm', ['start'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
  cleanups.push(async () => {
    const below = await descendants(npm.pid ?? 0);
    if (npm.exitCode === null) npm.kill('SIGKILL');
    for (const pid of below) process.kill(pid, 'SIGKILL');
  });
  const since = Date.now();
  while ((await fetch(`http://127.0.0.1:${port}/api/v1/readyz`).then((r) => r.status, () => 0)) !== 200) {
    if (npm.exitCode !== null || Date.now() - since > 120_000) throw new Error(`npm start did not become ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { npm, port, dataDir, output: () => output, exited };
}

/** Every process below `pid` (children, grandchildren, ...). */
async function descendants(pid: number): Promise<number[]> {
  const { stdout } = await promisify(execFile)('ps', ['-e', '-o', 'pid=,ppid=']);
  const children = new Map<number, number[]>();
  for (const line of stdout.trim().split('\n')) {
    const [child, parent] = line.trim().split(/\s+/).map(Number);
    if (child !== undefined && parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), child]);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const next = children.get(queue.shift() ?? 0) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await fs.readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

/** SIGTERM to npm only; then npm, node and PostgreSQL must all be gone and the port free. */
async function stopThroughNpm(started: Started): Promise<void> {
  const node = (await descendants(started.npm.pid ?? 0)).filter((pid) => pid !== started.npm.pid);
  const postmaster = await postmasterPid(started.dataDir);
  expect(node.length).toBeGreaterThan(0);
  expect(alive(postmaster)).toBe(true);

  started.npm.kill('SIGTERM');
  const code = await Promise.race([started.exited, new Promise((resolve) => setTimeout(() => resolve('npm still running'), 30_000))]);
  expect(code, started.output()).toBe(0);
  for (const pid of [...node, postmaster]) expect(alive(pid), `pid ${pid} is gone`).toBe(false);
  expect(await portIsFree(started.port)).toBe(true);
  expect(started.output()).toMatch(/"msg":"shutting down"/);
}

describe('a supervisor stops `npm start` by signalling npm alone', () => {
  it('SIGTERM to the npm process stops node and PostgreSQL too, frees the port, and npm exits 0', { timeout: 180_000 }, async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-npm-'));
    cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
    // mkdtemp makes 0700; the data stays reachable for the `postgres` user when this runs as root.
    await fs.chmod(dir, 0o755);
    await stopThroughNpm(await npmStart(root, path.join(dir, 'data')));
  });

  it('runs node with the malloc settings that keep memory from growing under load (docs/operations.md)', { timeout: 180_000 }, async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-npm-'));
    cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
    await fs.chmod(dir, 0o755);
    const started = await npmStart(root, path.join(dir, 'data'));
    // With `exec`, npm's one child is node itself (found first: descendants are listed breadth first).
    const [node] = await descendants(started.npm.pid ?? 0);
    expect(await fs.readFile(`/proc/${String(node)}/cmdline`, 'utf8')).toContain('bin/agent-org.mjs');
    const environ = (await fs.readFile(`/proc/${String(node)}/environ`, 'utf8')).split('\0');
    expect(environ).toEqual(expect.arrayContaining(['MALLOC_ARENA_MAX=2', 'MALLOC_MMAP_THRESHOLD_=131072']));
    await stopThroughNpm(started);
  });
});

describe.skipIf(!isRoot)('npm start as root from a checkout below a 0700 directory (skipped unless the tests run as root)', () => {
  it('starts (the postgres user reaches neither node_modules nor DATA_DIR there) and stops again', { timeout: 240_000 }, async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-private-'));
    cleanups.push(() => fs.rm(home, { recursive: true, force: true }));
    expect((await fs.stat(home)).mode & 0o777).toBe(0o700);
    // A checkout there: the repository's files hard-linked (copied if linking is impossible), node_modules included.
    const checkout = path.join(home, 'agent-org');
    await fs.mkdir(checkout);
    const entries = (await fs.readdir(root)).filter((name) => name !== '.git' && name !== '.data');
    const copy = (flags: string[]) => promisify(execFile)('cp', [...flags, ...entries.map((name) => path.join(root, name)), checkout]);
    await copy(['-a', '--link']).catch(() => copy(['-a']));

    const dataDir = path.join(checkout, '.data');
    const started = await npmStart(checkout, dataDir);
    // Where the cluster went when the postgres user could not reach DATA_DIR; removed with the test.
    const cluster = await fs.realpath(path.join(dataDir, 'pg'));
    if (!cluster.startsWith(home)) cleanups.unshift(() => fs.rm(cluster, { recursive: true, force: true }));
    await stopThroughNpm(started);
    // The user's directory keeps its permissions.
    expect((await fs.stat(home)).mode & 0o777).toBe(0o700);

    // The checkout's data removed (as a fresh clone at the same path would have none): it starts again on a new
    // cluster, whose password it knows, and the old one is kept aside rather than deleted.
    await fs.rm(dataDir, { recursive: true, force: true });
    const again = await npmStart(checkout, dataDir);
    expect(await fs.realpath(path.join(dataDir, 'pg'))).toBe(cluster);
    await stopThroughNpm(again);
    const clusters = path.dirname(cluster);
    const aside = (await fs.readdir(clusters)).filter((name) => name.startsWith(`${path.basename(cluster)}.orphaned-`));
    for (const name of aside) cleanups.unshift(() => fs.rm(path.join(clusters, name), { recursive: true, force: true }));
    expect(aside).toHaveLength(1);
    expect((await fs.readdir(path.join(clusters, aside[0] ?? ''))).includes('PG_VERSION')).toBe(true);
  });
});
