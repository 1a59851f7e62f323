// Shared benchmark plumbing: autocannon in its own process, a service on a throwaway embedded database, report lines.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { createService, type Service } from '../src/service.ts';

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
export async function load(url: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const args = [AUTOCANNON, '-c', String(opts.connections ?? CONNECTIONS), '-d', String(opts.durationS ?? DURATION_S), '--json', '-n'];
  for (const [name, value] of Object.entries(opts.headers ?? {})) args.push('-H', `${name}=${value}`);
  if (opts.method) args.push('-m', opts.method);
  if (opts.body !== undefined) args.push('-b', opts.body);
  args.push(url);
  const { requestsPerSecond, p50, p99, non2xx, errors } = await runAutocannon(args);
  return { requestsPerSecond, p50, p99, non2xx, errors };
}

/** The middle value (the upper of the two middle ones for an even count); NaN when there are none. */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
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
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), opts.name ? `agent-org-bench-${opts.name}-` : 'agent-org-bench-'));
  try {
    // As root the embedded server runs as `postgres` and must reach its data dir.
    await fs.chmod(dataDir, 0o755);
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

/**
 * The raw ceiling's session lookup (bench/auth.ts, users-list.ts, approvals.ts): token → session → user in
 * one statement on a plain pg pool, the same lookup the service makes for a bearer token.
 */
export const RAW_SESSION_LOOKUP =
  'select u.id, u.username, u.role, u.must_change_password from sessions s join users u on u.id = s.user_id where s.token_hash = $1 and s.revoked_at is null and s.expires_at > now()';

/** The signed-in user of a raw route's request, or null (then the route answers 401). */
export async function rawUser(pool: { query(text: string, values: unknown[]): Promise<{ rows: unknown[] }> }, authorization: string | undefined): Promise<unknown> {
  const token = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
  if (!token) return null;
  const { rows } = await pool.query(RAW_SESSION_LOOKUP, [createHash('sha256').update(token).digest('hex')]);
  return rows[0] ?? null;
}

/** The fraction `app / ceiling` of two same-run results' throughput. */
export function ratio(app: LoadResult, ceiling: LoadResult): string {
  return (app.requestsPerSecond / ceiling.requestsPerSecond).toFixed(2);
}
