// `npm run bench`: startup times of `npm start`, idle memory, and healthz throughput against the plain-Fastify ceiling.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/net/freePort.ts';
import { benchHealthz } from './healthz.ts';
import { median, rssBytes } from './lib.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = 3;
const WARM_RUNS = 3;

/** Child processes of `pid`, read from /proc (npm runs the script through a shell). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const queue = [pid];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The Node process of the service (not npm, not the shell, not PostgreSQL). */
function servicePid(npmPid: number): number {
  const pid = descendants(npmPid).find((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes('bin/agent-org.mjs');
    } catch {
      return false;
    }
  });
  if (pid === undefined) throw new Error('could not find the service process');
  return pid;
}

type Started = { npm: ChildProcess; ms: number; port: number };

/** `npm start` until the first 200 from /api/v1/readyz. */
async function npmStart(dataDir: string, compileCache: string): Promise<Started> {
  const port = await freePort();
  const t0 = performance.now();
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', NODE_COMPILE_CACHE: compileCache },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (;;) {
    const status = await fetch(`http://127.0.0.1:${port}/api/v1/readyz`).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return { npm, ms: performance.now() - t0, port };
    if (npm.exitCode !== null) throw new Error(`npm start exited with ${npm.exitCode}`);
    if (performance.now() - t0 > 60_000) throw new Error('npm start did not become ready within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function stop(started: Started): Promise<void> {
  const exited = new Promise((resolve) => started.npm.on('exit', resolve));
  process.kill(servicePid(started.npm.pid ?? 0), 'SIGTERM');
  await exited;
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-bench-start-'));
await fs.chmod(dataDir, 0o755);
// Cold means a first start ever: no database and no compiled-module cache (src/main.ts enables it).
const compileCache = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-bench-cc-'));
try {
  console.error('cold start (empty DATA_DIR, empty compile cache) ...');
  const cold = await npmStart(dataDir, compileCache);
  await stop(cold);

  const warm: number[] = [];
  let idleRss = NaN;
  for (let run = 0; run < WARM_RUNS; run++) {
    console.error(`warm start ${run + 1}/${WARM_RUNS} ...`);
    const started = await npmStart(dataDir, compileCache);
    warm.push(started.ms);
    if (run === WARM_RUNS - 1) {
      // Idle: booted, answered one readiness probe, then left alone.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      idleRss = rssBytes(servicePid(started.npm.pid ?? 0)) / 2 ** 20;
    }
    await stop(started);
  }

  console.error(`GET /api/v1/healthz, 50 connections, ${ROUNDS} × ${DURATION_S} s each ...`);
  const healthz = await benchHealthz({ connections: 50, durationS: DURATION_S, rounds: ROUNDS });

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const report = [
    `### ${new Date().toISOString().slice(0, 10)} — ${os.availableParallelism()} cores (${cpu}), ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM, Node ${process.versions.node}, ${os.type()} ${os.release()}`,
    '',
    `GET /api/v1/healthz, ${healthz.connections} connections, autocannon in its own process, 2 s warm-up, then ${healthz.rounds} alternating rounds of ${healthz.durationS} s per server; the median round of each:`,
    '',
    '| server | req/s | p50 ms | p99 ms | non-2xx | errors |',
    '|---|---:|---:|---:|---:|---:|',
    `| agent-org (facade, envelope, hooks, helmet) | ${fmt(healthz.app.requestsPerSecond)} | ${healthz.app.p50} | ${healthz.app.p99} | ${healthz.app.non2xx} | ${healthz.app.errors} |`,
    `| plain Fastify route, same JSON (ceiling) | ${fmt(healthz.ceiling.requestsPerSecond)} | ${healthz.ceiling.p50} | ${healthz.ceiling.p99} | ${healthz.ceiling.non2xx} | ${healthz.ceiling.errors} |`,
    '',
    `Ratio agent-org / ceiling: **${fmt(healthz.ratio, 2)}** (target ≥ 0.5).`,
    '',
    '| startup and memory | measured | target |',
    '|---|---:|---:|',
    `| cold \`npm start\`, empty DATA_DIR and compile cache (initdb included) → first 200 from /readyz | ${fmt(cold.ms / 1000, 2)} s | < 5 s |`,
    `| warm restart → first 200 from /readyz (median of ${WARM_RUNS}: ${warm.map((ms) => fmt(ms / 1000, 2)).join(', ')} s) | ${fmt(median(warm) / 1000, 2)} s | < 1.5 s |`,
    `| idle RSS of the Node process (3 s after ready) | ${fmt(idleRss)} MiB | < 150 MB |`,
  ];
  console.log(report.join('\n'));
} finally {
  await fs.rm(dataDir, { recursive: true, force: true });
  await fs.rm(compileCache, { recursive: true, force: true });
}
