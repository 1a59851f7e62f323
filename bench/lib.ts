// Shared benchmark plumbing: autocannon in its own process, a service on a throwaway embedded database, report lines.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { loadConfig, type Config } from '../src/config.ts';
import { systemClock } from '../src/contracts/clock.ts';
import type { Role } from '../src/contracts/roles.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { createLogger } from '../src/logger.ts';
import { freePort } from '../src/net/freePort.ts';
import { createService, type Service } from '../src/service.ts';
import { createAccount } from '../src/services/auth/accounts.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { USERS_LIST } from '../src/services/users/users.ts';
import type { RawCeilingSettings } from './rawCeiling.ts';

export { RAW_SESSION_LOOKUP, rawUser } from './rawSession.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
export const NODE = path.join(root, 'node_modules', '.bin', 'node');
/** The autocannon package, for scripts that drive its API (`require(AUTOCANNON_PACKAGE)`). */
export const AUTOCANNON_PACKAGE = path.join(root, 'node_modules', 'autocannon');
const AUTOCANNON = path.join(AUTOCANNON_PACKAGE, 'autocannon.js');

export const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

export type LoadResult = { requestsPerSecond: number; p50: number; p99: number; non2xx: number; errors: number };
/** A LoadResult plus the number of 2xx answers and how long the run took in seconds. */
export type LoadTotals = LoadResult & { ok: number; seconds: number };

const AutocannonJson = z.object({
  requests: z.object({ average: z.number() }),
  latency: z.object({ p50: z.number(), p99: z.number() }),
  non2xx: z.number(),
  errors: z.number(),
  '2xx': z.number(),
  duration: z.number(),
});

export type LoadOptions = { connections?: number; durationS?: number; headers?: Record<string, string>; method?: string; body?: string };

/**
 * `node ...args` in its own process, which must print autocannon's JSON result on stdout: the autocannon CLI
 * with `--json`, or a script (`-e`) that drives autocannon's API where the CLI cannot express the load.
 */
export async function runAutocannon(args: readonly string[]): Promise<LoadTotals> {
  const child = spawn(NODE, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`autocannon exited with ${String(code)}`);
  const parsed = AutocannonJson.parse(JSON.parse(out));
  return {
    requestsPerSecond: parsed.requests.average,
    p50: parsed.latency.p50,
    p99: parsed.latency.p99,
    non2xx: parsed.non2xx,
    errors: parsed.errors,
    ok: parsed['2xx'],
    seconds: parsed.duration,
  };
}

/** One autocannon run in its own process, so the load generator does not share the server's event loop. */
export async function loadTotals(url: string, opts: LoadOptions = {}): Promise<LoadTotals> {
  const args = [AUTOCANNON, '-c', String(opts.connections ?? CONNECTIONS), '-d', String(opts.durationS ?? DURATION_S), '--json', '-n'];
  for (const [name, value] of Object.entries(opts.headers ?? {})) args.push('-H', `${name}=${value}`);
  if (opts.method) args.push('-m', opts.method);
  if (opts.body !== undefined) args.push('-b', opts.body);
  args.push(url);
  return runAutocannon(args);
}

/** loadTotals() without the totals. */
export async function load(url: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const { requestsPerSecond, p50, p99, non2xx, errors } = await loadTotals(url, opts);
  return { requestsPerSecond, p50, p99, non2xx, errors };
}

/** The middle value (the upper of the two middle ones for an even count); NaN when there are none. */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
}

/** The nearest-rank `p`th percentile of values sorted ascending; NaN when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** The run with the median throughput, so one disturbed round (a shared machine) does not decide. */
export function medianRun(results: readonly LoadResult[]): LoadResult {
  const sorted = [...results].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (!middle) throw new Error('no results');
  return middle;
}

export type BenchService = { service: Service; dataDir: string; close(): Promise<void> };

/**
 * The production service on an embedded database in a fresh temporary DATA_DIR (`agent-org-bench-<name>-…`),
 * removed again by close(). With `sharing`, a further service on that one's database and DATA_DIR instead:
 * its close() stops only itself, and the owner is to be closed last.
 */
export async function startBenchService(env: Record<string, string> = {}, opts: { name?: string; sharing?: BenchService } = {}): Promise<BenchService> {
  if (opts.sharing) {
    const { dataDir, service: owner } = opts.sharing;
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', PORT: '0', DATABASE_URL: owner.db.url, ...env });
    const service = await createService(config, createLogger(config.logLevel), { database: owner.db });
    return { service, dataDir, close: () => service.close() };
  }
  const dataDir = await benchDataDir(opts.name);
  try {
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', PORT: '0', ...env });
    const service = await createService(config, createLogger(config.logLevel));
    return {
      service,
      dataDir,
      async close() {
        await service.close();
        await fs.rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await fs.rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** A fresh temporary DATA_DIR (`agent-org-bench-<name>-…`). */
async function benchDataDir(name: string | undefined): Promise<string> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), name ? `agent-org-bench-${name}-` : 'agent-org-bench-'));
  // As root the embedded server runs as `postgres` and must reach its data dir.
  await fs.chmod(dataDir, 0o755);
  return dataDir;
}

/**
 * The server secret of a bench database's processes: the service and the raw ceiling sign cursors with it
 * alike, and the ceiling need not read it from the database.
 */
const BENCH_APP_SECRET = 'agent-org bench secret, not for any real deployment';

export type BenchDatabase = { db: Database; config: Config; dataDir: string; close(): Promise<void> };

/**
 * The embedded database alone, migrated, in a fresh temporary DATA_DIR, for benches whose service runs in a
 * process of its own (startServiceProcess). `db.orm` and `config` seed it as the service would.
 */
export async function startBenchDatabase(name: string): Promise<BenchDatabase> {
  const dataDir = await benchDataDir(name);
  try {
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', PORT: '0', APP_SECRET: BENCH_APP_SECRET });
    const db = await openDatabase(config, { debug: () => {}, info: () => {}, warn: (message) => console.error(message) });
    return {
      db,
      config,
      dataDir,
      async close() {
        await db.close();
        await fs.rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await fs.rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * A user of `role` on a bench database, signed in as the service would sign it in (no HTTP, so no login
 * throttle or rate limit is spent on it): its id and its bearer token.
 */
export async function signedInUser(database: BenchDatabase, username: string, role: Role): Promise<{ id: string; token: string }> {
  const em = database.db.orm.em.fork();
  const clock = systemClock;
  const user = await createAccount({ em, clock }, { username, password: 'quiet lantern orbit 7319', role, mustChangePassword: false });
  const session = await em.transactional((tx) => issueSession({ em: tx, clock, config: database.config }, user.id, { ip: '127.0.0.1', userAgent: 'bench' }));
  return { id: user.id, token: session.accessToken };
}

/** A server in a child process: where it listens, its pid, and the CPU time it has used. */
export type ServerProcess = { url: string; pid: number; cpuSeconds(): number; stop(): Promise<void> };

let clockTicks: number | undefined;

/** User + system CPU time of every thread of process `pid` so far, in seconds (utime + stime of /proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Counted from after the command name, which may hold spaces: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

/** Resident set size of process `pid` now, in bytes (VmRSS of /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? NaN) * 1024;
}

/**
 * `node ...args` as a server on `port`, returned once `readyPath` answers 200. With BENCH_CPU_PROF set to a
 * directory, the process writes a V8 CPU profile there (under `name`/) when it stops.
 */
async function startServer(name: string, args: readonly string[], env: Record<string, string>, port: number, readyPath: string): Promise<ServerProcess> {
  const profileDir = process.env.BENCH_CPU_PROF;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir, name)}`] : [];
  const child = spawn(NODE, [...profile, ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
  const { pid } = child;
  if (pid === undefined) throw new Error(`${name} did not start`);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  // Should the bench die without stopping it, the server must not outlive it.
  const orphaned = () => void child.kill('SIGTERM');
  process.once('exit', orphaned);
  const server: ServerProcess = {
    url: `http://127.0.0.1:${port}`,
    pid,
    cpuSeconds: () => cpuSeconds(pid),
    async stop() {
      process.off('exit', orphaned);
      if (running()) child.kill('SIGTERM');
      await exited;
    },
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await fetch(`${server.url}${readyPath}`).then(
      async (res) => (await res.arrayBuffer(), res.status),
      () => 0,
    );
    if (status === 200) return server;
    if (!running()) throw new Error(`${name} exited before it was ready`);
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${name} was not ready within 60 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** package.json's start script, `exec env NAME=value … node --flag … <entry>`, taken apart. */
function npmStartCommand(): { env: Record<string, string>; nodeArgs: string[]; entry: string } {
  const pkg = z.object({ scripts: z.object({ start: z.string() }) }).parse(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')));
  const match = /^exec env((?: \w+=\S+)*) node((?: --\S+)*) (\S+\.mjs)$/.exec(pkg.scripts.start);
  if (!match?.[3]) throw new Error(`bench/lib.ts does not understand package.json's start script any more: ${pkg.scripts.start}`);
  const words = (text: string | undefined) => (text ?? '').split(' ').filter((word) => word !== '');
  const env = Object.fromEntries(words(match[1]).map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]));
  return { env, nodeArgs: words(match[2]), entry: match[3] };
}

/**
 * The production service as `npm start` runs it (its Node flags and environment), in a process of its own on
 * the bench database: its CPU time is its own, and no ceiling or load generator shares its event loop.
 */
export async function startServiceProcess(database: BenchDatabase, env: Record<string, string> = {}): Promise<ServerProcess> {
  const start = npmStartCommand();
  const port = await freePort();
  return startServer(
    'service',
    [...start.nodeArgs, start.entry],
    {
      ...start.env,
      DATABASE_URL: database.db.url,
      DATA_DIR: database.dataDir,
      APP_SECRET: BENCH_APP_SECRET,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      // One instance, as on its own embedded database: with a DATABASE_URL the limiter and the login
      // throttle would otherwise keep their buckets in PostgreSQL.
      RATE_LIMIT_STORE: 'memory',
      ...env,
    },
    port,
    '/api/v1/readyz',
  );
}

/**
 * The raw Fastify + pg ceiling (bench/rawCeiling.ts) in a process of its own, on the bench database, with the
 * service's Node flags and environment: the two sides differ in their code only.
 */
export async function startRawCeiling(database: BenchDatabase): Promise<ServerProcess> {
  const start = npmStartCommand();
  const port = await freePort();
  const settings: RawCeilingSettings = { databaseUrl: database.db.url, port, secret: BENCH_APP_SECRET, usersList: USERS_LIST };
  return startServer('raw', [...start.nodeArgs, path.join(root, 'bench', 'rawCeiling.ts')], { ...start.env, BENCH_RAW: JSON.stringify(settings) }, port, '/ready');
}

/** A load run plus the CPU time the server's process spent on it, per completed request. */
export type Measured = LoadResult & { cpuUsPerRequest: number };

export async function measure(server: ServerProcess, url: string, opts: LoadOptions = {}): Promise<Measured> {
  const before = server.cpuSeconds();
  const { requestsPerSecond, p50, p99, non2xx, errors, ok } = await loadTotals(url, opts);
  const cpu = server.cpuSeconds() - before;
  return { requestsPerSecond, p50, p99, non2xx, errors, cpuUsPerRequest: ok + non2xx > 0 ? (cpu * 1e6) / (ok + non2xx) : NaN };
}

/** Rounds per side of alternateRounds(); odd, so median() is a true median. */
export const PAIR_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** One side of a pairing: its server, the URL it is loaded on, and what it sends beyond the shared options (its own credential, say). */
export type Contender = { server: ServerProcess; url: string; opts?: LoadOptions };
export type Pairing = { app: Measured[]; ceiling: Measured[] };

/**
 * The developers' rule for a ceiling: it runs in a process of its own, rounds alternate (app, ceiling, app,
 * ceiling …, after a 3 s warm-up of each) so the shared machine's other tenants weigh on both alike, and CPU
 * per request and p99 are reported beside req/s.
 */
export async function alternateRounds(app: Contender, ceiling: Contender, opts: LoadOptions = {}): Promise<Pairing> {
  const optsOf = (side: Contender): LoadOptions => ({ ...opts, ...side.opts, headers: { ...opts.headers, ...side.opts?.headers } });
  await loadTotals(app.url, { ...optsOf(app), durationS: 3 });
  await loadTotals(ceiling.url, { ...optsOf(ceiling), durationS: 3 });
  const pairing: Pairing = { app: [], ceiling: [] };
  for (let round = 0; round < PAIR_ROUNDS; round++) {
    pairing.app.push(await measure(app.server, app.url, optsOf(app)));
    pairing.ceiling.push(await measure(ceiling.server, ceiling.url, optsOf(ceiling)));
  }
  return pairing;
}

export type PairingRatios = { throughput: number; p99: number; cpu: number };

/** App ÷ ceiling of each round's pair (adjacent in time), for req/s, p99 and CPU per request. */
export function roundRatios(pairing: Pairing): PairingRatios[] {
  return pairing.app.flatMap((app, i) => {
    const ceiling = pairing.ceiling[i];
    return ceiling ? [{ throughput: app.requestsPerSecond / ceiling.requestsPerSecond, p99: app.p99 / ceiling.p99, cpu: app.cpuUsPerRequest / ceiling.cpuUsPerRequest }] : [];
  });
}

/** The median of each ratio over the rounds. */
export function medianRatios(pairing: Pairing): PairingRatios {
  const ratios = roundRatios(pairing);
  return { throughput: median(ratios.map((r) => r.throughput)), p99: median(ratios.map((r) => r.p99)), cpu: median(ratios.map((r) => r.cpu)) };
}

export const CPU_TABLE_HEAD = '| case | req/s | p50 ms | p99 ms | CPU µs/req | non-2xx | errors |\n|---|---|---|---|---|---|---|';

export function cpuTableRow(name: string, r: Measured): string {
  return `| ${name} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.cpuUsPerRequest.toFixed(0)} | ${r.non2xx} | ${r.errors} |`;
}

/**
 * A pairing's rows (every round of both sides, in the order they ran), then each round's ratios and their
 * medians against the targets given (`≥ throughput`, `≤ p99`).
 */
export function pairingReport(appName: string, ceilingName: string, pairing: Pairing, targets: { throughput?: number; p99?: number } = {}): string[] {
  const rows = pairing.app.flatMap((app, i) => {
    const ceiling = pairing.ceiling[i];
    return [cpuTableRow(`${appName} (round ${i + 1})`, app), ...(ceiling ? [cpuTableRow(`${ceilingName} (round ${i + 1})`, ceiling)] : [])];
  });
  const fmt = (values: readonly number[]) => values.map((v) => v.toFixed(2)).join(', ');
  const ratios = roundRatios(pairing);
  const middle = medianRatios(pairing);
  const target = (value: number | undefined, sign: string) => (value === undefined ? '' : ` (target ${sign} ${value})`);
  return [
    CPU_TABLE_HEAD,
    ...rows,
    '',
    `${appName} ÷ ${ceilingName}, each round's pair, ${String(ratios.length)} rounds (median; per round):`,
    `- req/s: ${middle.throughput.toFixed(2)}${target(targets.throughput, '≥')}; ${fmt(ratios.map((r) => r.throughput))}`,
    `- p99: ${middle.p99.toFixed(2)}${target(targets.p99, '≤')}; ${fmt(ratios.map((r) => r.p99))}`,
    `- CPU per request: ${middle.cpu.toFixed(2)}; ${fmt(ratios.map((r) => r.cpu))}`,
  ];
}

/** Node version, CPUs and memory of this machine. */
export function machineSpec(): string {
  return `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`;
}

/** machineSpec() and today's date. */
export function machine(): string {
  return `${machineSpec()}, ${new Date().toISOString().slice(0, 10)}`;
}

export const TABLE_HEAD = '| case | req/s | p50 ms | p99 ms | non-2xx | errors |\n|---|---|---|---|---|---|';

export function tableRow(name: string, r: LoadResult): string {
  return `| ${name} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.non2xx} | ${r.errors} |`;
}

/** The fraction `app / ceiling` of two same-run results' throughput. */
export function ratio(app: LoadResult, ceiling: LoadResult): string {
  return (app.requestsPerSecond / ceiling.requestsPerSecond).toFixed(2);
}
