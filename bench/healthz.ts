// GET /api/v1/healthz through the production app versus a plain Fastify route (the ceiling), same run, autocannon.
import Fastify from 'fastify';
import { SERVICE_VERSION } from '../src/version.ts';
import { load, medianRun, startBenchService, type LoadResult } from './lib.ts';

export type { LoadResult } from './lib.ts';
export type HealthzBench = { connections: number; durationS: number; rounds: number; app: LoadResult; ceiling: LoadResult; ratio: number };

export async function benchHealthz(opts: { connections?: number; durationS?: number; rounds?: number } = {}): Promise<HealthzBench> {
  const connections = opts.connections ?? 50;
  const durationS = opts.durationS ?? 10;
  const rounds = opts.rounds ?? 3;
  const bench = await startBenchService({ LOG_LEVEL: 'info' });
  const { service } = bench;
  const plain = Fastify();
  const startedAt = performance.now();
  // The same JSON the facade sends, with no hooks, plugins or envelope logic: what Fastify alone costs.
  plain.get('/api/v1/healthz', async () => ({
    data: { status: 'ok', version: SERVICE_VERSION, uptime_seconds: Math.round((performance.now() - startedAt) / 10) / 100 },
    error: null,
    error_detail: null,
    success: true,
  }));
  try {
    const appUrl = `${await service.app.listen({ port: 0, host: '127.0.0.1' })}/api/v1/healthz`;
    const plainUrl = `${await plain.listen({ port: 0, host: '127.0.0.1' })}/api/v1/healthz`;
    // Warm both up (JIT, connection pools) before anything is recorded.
    await load(appUrl, { connections, durationS: 2 });
    await load(plainUrl, { connections, durationS: 2 });
    // Alternating rounds: both servers see the same background load, whatever else the machine does.
    const appRounds: LoadResult[] = [];
    const ceilingRounds: LoadResult[] = [];
    for (let round = 0; round < rounds; round++) {
      appRounds.push(await load(appUrl, { connections, durationS }));
      ceilingRounds.push(await load(plainUrl, { connections, durationS }));
    }
    const app = medianRun(appRounds);
    const ceiling = medianRun(ceilingRounds);
    return { connections, durationS, rounds, app, ceiling, ratio: app.requestsPerSecond / ceiling.requestsPerSecond };
  } finally {
    await plain.close();
    await bench.close();
  }
}
