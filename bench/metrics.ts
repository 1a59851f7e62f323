// What GET /metrics' request counting costs: GET /auth/me with METRICS_ENABLED on vs off (same run, same
// database, alternating rounds), and the onResponse work alone per call.
import { createMetrics } from '../src/metrics/registry.ts';
import { createAccount } from '../src/services/auth/accounts.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { DURATION_S, load, machine, median, startBenchService, TABLE_HEAD, tableRow, type LoadResult } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const on = await startBenchService({ RATE_LIMITS_ENABLED: 'false' }, { name: 'metrics' });
const off = await startBenchService({ RATE_LIMITS_ENABLED: 'false', METRICS_ENABLED: 'false' }, { sharing: on });
try {
  const { deps } = on.service;
  const em = deps.orm.em.fork();
  const user = await em.transactional((tx) =>
    createAccount({ em: tx, clock: deps.clock }, { username: 'bench', password: 'quiet lantern orbit 7319', role: 'ceo', mustChangePassword: false }),
  );
  const session = await em.transactional((tx) => issueSession({ em: tx, clock: deps.clock, config: deps.config }, user.id, { ip: '127.0.0.1', userAgent: 'bench' }));
  const headers = { authorization: `Bearer ${session.accessToken}` };
  const onBase = await on.service.app.listen({ port: 0, host: '127.0.0.1' });
  const offBase = await off.service.app.listen({ port: 0, host: '127.0.0.1' });

  await load(`${onBase}/api/v1/auth/me`, { headers, durationS: 3 });
  await load(`${offBase}/api/v1/auth/me`, { headers, durationS: 3 });
  const withMetrics: LoadResult[] = [];
  const without: LoadResult[] = [];
  // Alternating, so a neighbour's burst on a shared machine hits both sides alike.
  for (let round = 0; round < ROUNDS; round++) {
    withMetrics.push(await load(`${onBase}/api/v1/auth/me`, { headers }));
    without.push(await load(`${offBase}/api/v1/auth/me`, { headers }));
  }

  // The hook's own work per request, outside any server: label lookup, counter, histogram.
  const metrics = createMetrics();
  const CALLS = 1_000_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) {
    metrics.requests.labels('auth.me', 'GET', '200').inc();
    metrics.requestDuration.labels('auth.me', 'GET', '200').observe(0.002 + (i % 7) / 1000);
  }
  const nsPerCall = Number(process.hrtime.bigint() - started) / CALLS;

  const rps = (runs: LoadResult[]) => median(runs.map((r) => r.requestsPerSecond));
  console.log(`# metrics overhead\n${machine()}, ${ROUNDS} alternating rounds of ${DURATION_S} s\n`);
  console.log(TABLE_HEAD);
  withMetrics.forEach((r, i) => console.log(tableRow(`auth/me, metrics on (round ${i + 1})`, r)));
  without.forEach((r, i) => console.log(tableRow(`auth/me, metrics off (round ${i + 1})`, r)));
  const cost = 1 - rps(withMetrics) / rps(without);
  console.log(`\nmedian req/s: on ${rps(withMetrics).toFixed(0)}, off ${rps(without).toFixed(0)}: metrics cost ${(cost * 100).toFixed(1)} % (target < 3 %)`);
  console.log(`onResponse work alone: ${nsPerCall.toFixed(0)} ns per request (${((nsPerCall / 1e9) * rps(without) * 100).toFixed(2)} % of one core at the off rate)`);
} finally {
  await off.close();
  await on.close();
}
