// GET /api/v1/healthz through the production app versus a plain Fastify route (the ceiling), same run, autocannon.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { z } from 'zod';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { createService } from '../src/service.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const NODE = path.join(root, 'node_modules', '.bin', 'node');
const AUTOCANNON = path.join(root, 'node_modules', 'autocannon', 'autocannon.js');

export type LoadResult = { requestsPerSecond: number; p50: number; p99: number; non2xx: number; errors: number };
export type HealthzBench = { connections: number; durationS: number; rounds: number; app: LoadResult; ceiling: LoadResult; ratio: number };

const AutocannonJson = z.object({
  requests: z.object({ average: z.number() }),
  latency: z.object({ p50: z.number(), p99: z.number() }),
  non2xx: z.number(),
  errors: z.number(),
});

/** One autocannon run in its own process, so the load generator does not share the server's event loop. */
async function load(url: string, connections: number, durationS: number): Promise<LoadResult> {
  const child = spawn(NODE, [AUTOCANNON, '-c', String(connections), '-d', String(durationS), '--json', '-n', url], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`autocannon exited with ${String(code)}`);
  const parsed = AutocannonJson.parse(JSON.parse(out));
  return { requestsPerSecond: parsed.requests.average, p50: parsed.latency.p50, p99: parsed.latency.p99, non2xx: parsed.non2xx, errors: parsed.errors };
}

/** The round with the median throughput, so one disturbed round (a shared machine) does not decide. */
function median(results: LoadResult[]): LoadResult {
  const sorted = [...results].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (!middle) throw new Error('no results');
  return middle;
}

export async function benchHealthz(opts: { connections?: number; durationS?: number; rounds?: number } = {}): Promise<HealthzBench> {
  const connections = opts.connections ?? 50;
  const durationS = opts.durationS ?? 10;
  const rounds = opts.rounds ?? 3;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-bench-'));
  // As root the embedded server runs as `postgres` and must reach its data dir.
  await fs.chmod(dataDir, 0o755);
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info', PORT: '0' });
  const service = await createService(config, createLogger(config.logLevel));
  const plain = Fastify();
  const startedAt = performance.now();
  // The same JSON the facade sends, with no hooks, plugins or envelope logic: what Fastify alone costs.
  plain.get('/api/v1/healthz', async () => ({
    data: { status: 'ok', uptime_seconds: Math.round((performance.now() - startedAt) / 10) / 100 },
    error: null,
    error_detail: null,
    success: true,
  }));
  try {
    const appUrl = `${await service.app.listen({ port: 0, host: '127.0.0.1' })}/api/v1/healthz`;
    const plainUrl = `${await plain.listen({ port: 0, host: '127.0.0.1' })}/api/v1/healthz`;
    // Warm both up (JIT, connection pools) before anything is recorded.
    await load(appUrl, connections, 2);
    await load(plainUrl, connections, 2);
    // Alternating rounds: both servers see the same background load, whatever else the machine does.
    const appRounds: LoadResult[] = [];
    const ceilingRounds: LoadResult[] = [];
    for (let round = 0; round < rounds; round++) {
      appRounds.push(await load(appUrl, connections, durationS));
      ceilingRounds.push(await load(plainUrl, connections, durationS));
    }
    const app = median(appRounds);
    const ceiling = median(ceilingRounds);
    return { connections, durationS, rounds, app, ceiling, ratio: app.requestsPerSecond / ceiling.requestsPerSecond };
  } finally {
    await plain.close();
    await service.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
