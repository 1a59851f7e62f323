// What the rate limiter costs per request: the same authenticated routes with limits off, memory store, PostgreSQL store.
// Run by hand: node_modules/.bin/node bench/limits.ts  (BENCH_DURATION seconds per run, default 10).
import os from 'node:os';
import { createContextInner, recordingSink } from '../src/context/index.ts';
import { applyLimits } from '../src/limits/middleware.ts';
import { createAccount } from '../src/services/auth/accounts.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { DURATION_S, load, median, startBenchService, type BenchService, type LoadResult } from './lib.ts';

const WARMUP_S = 2;
const ROUNDS = 5;
const CONNECTIONS = [1, 10];
const DIRECT_CALLS_PER_ROUND = 500;

// Limits high enough never to refuse, so every request walks the whole limiter path and none is a cheap 429.
const NEVER_REFUSE = JSON.stringify({
  'global.authenticated': { limit: 1_000_000_000, window_s: 60 },
  'auth.sessions_list': { limit: 1_000_000_000, window_s: 60 },
});

const ROUTES = [
  { path: '/api/v1/auth/me', limits: 'global (5000) only' },
  { path: '/api/v1/auth/sessions', limits: 'global + sliding window (5001)' },
] as const;

const SETUPS = [
  { name: 'off', env: { RATE_LIMITS_ENABLED: 'false' } },
  { name: 'memory', env: { RATE_LIMIT_STORE: 'memory', RATE_LIMITS: NEVER_REFUSE } },
  { name: 'postgres', env: { RATE_LIMIT_STORE: 'postgres', RATE_LIMITS: NEVER_REFUSE } },
] as const;

type Instance = BenchService & { name: string; base: string; serverMs: number[] };

const instances: Instance[] = [];
try {
  // The first instance owns the embedded database; the others run on the same one with another limiter.
  for (const setup of SETUPS) {
    const bench = await startBenchService(setup.env, { name: 'limits', sharing: instances[0] });
    const { service } = bench;
    const serverMs: number[] = [];
    // Autocannon's latencies are whole milliseconds; the server's own clock resolves the sub-millisecond cost.
    service.app.addHook('onResponse', async (_req, reply) => {
      serverMs.push(reply.elapsedTime);
    });
    const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
    instances.push({ ...bench, name: setup.name, base, serverMs });
  }
  const deps = instances[0]!.service.deps;
  const em = deps.orm.em.fork();
  const user = await createAccount({ em, clock: deps.clock }, { username: 'bench_limits', password: 'bench limits password', role: 'observer', mustChangePassword: false });
  const session = await em.transactional((tx) => issueSession({ em: tx, clock: deps.clock, config: deps.config }, user.id, { ip: '127.0.0.1', userAgent: 'bench' }));
  const headers = { authorization: `Bearer ${session.accessToken}` };

  // The machine is shared, so load drifts during a run: the setups take turns in short rounds and
  // every figure is a median over all rounds, so drift hits each setup alike.
  const rows: string[] = [];
  for (const route of ROUTES) {
    for (const connections of CONNECTIONS) {
      const runs = new Map<string, LoadResult[]>(instances.map((i) => [i.name, []]));
      for (const instance of instances) await load(`${instance.base}${route.path}`, { headers, connections, durationS: WARMUP_S });
      for (const instance of instances) instance.serverMs.length = 0;
      for (let round = 0; round < ROUNDS; round++) {
        for (const instance of instances) {
          runs.get(instance.name)?.push(await load(`${instance.base}${route.path}`, { headers, connections, durationS: DURATION_S / ROUNDS }));
        }
      }
      const offServer = median(instances[0]!.serverMs);
      for (const instance of instances) {
        const results = runs.get(instance.name) ?? [];
        const server = median(instance.serverMs);
        const added = instance.name === 'off' ? '—' : (server - offServer).toFixed(3);
        const sum = (pick: (r: LoadResult) => number) => results.reduce((total, r) => total + pick(r), 0);
        const row = [
          route.path,
          route.limits,
          connections,
          instance.name,
          (sum((r) => r.requestsPerSecond) / results.length).toFixed(0),
          median(results.map((r) => r.p50)),
          median(results.map((r) => r.p99)),
          server.toFixed(3),
          added,
          sum((r) => r.non2xx),
          sum((r) => r.errors),
        ];
        console.error(row.join(' | '));
        rows.push(`| ${row.join(' | ')} |`);
      }
    }
  }

  // The limiter alone, in process: applyLimits around an empty call, one call at a time.
  const direct: string[] = [];
  const samples = new Map<string, number[]>(instances.map((i) => [i.name, []]));
  const actor = { userId: user.id, username: user.username, role: user.role, kind: 'human' as const, mustChangePassword: false, mfaEnabled: false, orgRoles: [], scopedDepartments: [], sessionId: session.sessionId, via: 'bearer' as const };
  for (let round = 0; round < ROUNDS * 4; round++) {
    for (const instance of instances) {
      for (let i = 0; i < DIRECT_CALLS_PER_ROUND; i++) {
        const ctx = { ...createContextInner({ deps: instance.service.deps, ip: '127.0.0.1', response: recordingSink() }), actor };
        const t0 = performance.now();
        await applyLimits(ctx, { path: 'auth.listSessions', op: 'auth.sessions_list', mutation: false }, async () => undefined);
        samples.get(instance.name)?.push(performance.now() - t0);
      }
    }
  }
  for (const instance of instances) {
    const values = samples.get(instance.name) ?? [];
    const sorted = [...values].sort((a, b) => a - b);
    const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? NaN;
    direct.push(`| ${instance.name} | ${values.length} | ${median(values).toFixed(3)} | ${p99.toFixed(3)} |`);
  }

  console.log(`### ${new Date().toISOString().slice(0, 10)} — ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.versions.node}, ${os.type()} ${os.release()}, load average ${os.loadavg()[0]?.toFixed(1)} at the end`);
  console.log('');
  console.log(
    `HTTP: ${DURATION_S} s per setup in ${ROUNDS} interleaved rounds after a ${WARMUP_S} s warm-up, one signed-in user (bearer token), ` +
      'autocannon in its own process, embedded PostgreSQL 18 on the same machine. "server median" is Fastify\'s own elapsed time per request.',
  );
  console.log('');
  console.log('| route | limits on the route | connections | limiter | req/s | client p50 ms | client p99 ms | server median ms | added vs off ms | non-2xx | errors |');
  console.log('|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
  console.log('');
  console.log('The limiter alone (`applyLimits` for auth.sessions_list: global bucket + sliding window), sequential calls, interleaved rounds:');
  console.log('');
  console.log('| limiter | calls | median ms | p99 ms |');
  console.log('|---|---:|---:|---:|');
  for (const row of direct) console.log(row);
} finally {
  for (const instance of instances.slice(1)) await instance.close();
  await instances[0]?.close();
}
