// The audit log (CONTRACT §4.13): GET /api/v1/audit?limit=50 per filter at each size (median latency, and its
// ratio to the smallest size), the plans behind it, and GET /api/v1/audit/export of every entry at the largest
// size: the service's RSS growth while it streams, and its rate against `psql \copy` of the same rows to a file.
// Run by hand: npm run bench:audit  (BENCH_AUDIT_SIZES=10000,1000000 by default; BENCH_AUDIT_REQUESTS=300 per filter;
// BENCH_AUDIT_EXPORT_ROUNDS=3 alternating export / psql rounds).
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { systemClock } from '../src/contracts/clock.ts';
import { createAccount } from '../src/services/auth/accounts.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { auditPageQuery, type AuditQuery } from '../src/services/audit/store.ts';
import { machineSpec, median, rssBytes, startBenchDatabase, startServiceProcess, type ServerProcess } from './lib.ts';

const SIZES = (process.env.BENCH_AUDIT_SIZES ?? '10000,1000000').split(',').map(Number);
const REQUESTS = Number(process.env.BENCH_AUDIT_REQUESTS ?? 300);
const WARMUP = 30;
const EXPORT_ROUNDS = Number(process.env.BENCH_AUDIT_EXPORT_ROUNDS ?? 3);
const PSQL = '/usr/bin/psql';

// Proportions that hold at every size, so each filter fills its page of 50 at 10,000 entries as at 1,000,000.
const TYPES = ['approval.created', 'approval.approved', 'auth.login_succeeded', 'auth.login_failed', 'auth.logout', 'user.updated', 'session.revoked', 'api_key.created'];
const ACTORS = 20;
const TARGETS = 100;
const START = Date.UTC(2026, 0, 1);
const STEP_MS = 1000;

type Filter = { name: string; query: string; store: AuditQuery };

function filtersFor(count: number): Filter[] {
  // A window over the middle tenth of the entries.
  const since = new Date(START + Math.floor(count * 0.45) * STEP_MS).toISOString();
  const until = new Date(START + Math.floor(count * 0.55) * STEP_MS).toISOString();
  return [
    { name: 'none', query: '', store: {} },
    { name: 'type prefix (auth.)', query: 'type=auth.', store: { type: { prefix: 'auth.' } } },
    { name: 'exact type (api_key.created)', query: 'type=api_key.created', store: { type: { exact: 'api_key.created' } } },
    { name: 'actor', query: 'actor=actor_7', store: { actor: 'actor_7' } },
    { name: 'target_id', query: 'target_id=target_42', store: { targetId: 'target_42' } },
    { name: 'since/until', query: `since=${since}&until=${until}`, store: { since: new Date(since), until: new Date(until) } },
  ];
}

const MiB = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

const bench = await startBenchDatabase('audit');
// Seeding a million rows takes longer than the service's statement limit: a plain connection without one.
const maintenance = new pg.Client({ connectionString: bench.db.url });
let service: ServerProcess | undefined;
try {
  await maintenance.connect();
  const em = bench.db.orm.em.fork();
  const clock = systemClock;
  const reader = await createAccount({ em, clock }, { username: 'bench_auditor', password: 'bench auditor password', role: 'ceo', mustChangePassword: false });
  const session = await em.transactional((tx) => issueSession({ em: tx, clock, config: bench.config }, reader.id, { ip: '127.0.0.1', userAgent: 'bench' }));
  const headers = { authorization: `Bearer ${session.accessToken}` };

  service = await startServiceProcess(bench, { RATE_LIMITS_ENABLED: 'false' });
  const medians = new Map<string, number[]>();
  const plans: string[] = [];

  console.log(`GET /api/v1/audit?limit=50 per filter, ${REQUESTS} sequential requests after ${WARMUP} (median), one bearer token; sizes ${SIZES.join(', ')}`);
  console.log(machineSpec());
  for (const size of SIZES) {
    await maintenance.query('truncate audit_entries');
    const seeded = performance.now();
    // A set-returning bulk seed (generate_series) has no query-builder form: one statement for every entry,
    // with data the size of an approval (about 400 bytes of JSON).
    await maintenance.query(
      `insert into audit_entries (occurred_at, type, category, actor, actor_type, ip_address, request_id, target_type, target_id, data)
       select to_timestamp($1::double precision / 1000) + g * $2 * interval '1 millisecond', t.type, split_part(t.type, '.', 1),
              'actor_' || (g % $3), 'user', '192.0.2.' || (g % 250), 'req-' || g, 'approval', 'target_' || (g % $4),
              jsonb_build_object('id', md5(g::text), 'title', 'Deploy release ' || g, 'description', repeat('d', 200), 'risk_level', 'high', 'status', 'pending')
         from generate_series(0, $5 - 1) as g
         cross join lateral (select ($6::text[])[1 + g % array_length($6::text[], 1)] as type) t`,
      [START, STEP_MS, ACTORS, TARGETS, size, TYPES],
    );
    await maintenance.query('vacuum analyze audit_entries'); // maintenance: no builder for it
    console.log(`\n${size} entries seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);
    if (size === SIZES[0]) {
      // The service's code warm (JIT) before anything is timed, so the first size is not measured cold.
      for (const filter of filtersFor(size)) {
        for (let i = 0; i < 10 * WARMUP; i++) await (await fetch(`${service.url}/api/v1/audit?limit=50${filter.query ? `&${filter.query}` : ''}`, { headers })).arrayBuffer();
      }
    }
    console.log('| filter | median ms | entries on the page |\n|---|---|---|');
    for (const filter of filtersFor(size)) {
      const url = `${service.url}/api/v1/audit?limit=50${filter.query ? `&${filter.query}` : ''}`;
      const times: number[] = [];
      let rows = 0;
      for (let i = 0; i < WARMUP + REQUESTS; i++) {
        const started = performance.now();
        const res = await fetch(url, { headers });
        const body = (await res.json()) as { data?: unknown[] };
        if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
        if (i >= WARMUP) times.push(performance.now() - started);
        rows = body.data?.length ?? 0;
      }
      const ms = median(times);
      medians.set(filter.name, [...(medians.get(filter.name) ?? []), ms]);
      console.log(`| ${filter.name} | ${ms.toFixed(2)} | ${rows} |`);
      const compiled = auditPageQuery(em, filter.store, null, 51).compile();
      const { rows: plan } = await maintenance.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers, costs off, summary off) ${compiled.sql}`, [...compiled.parameters]);
      plans.push(`-- ${size} entries, ${filter.name}\n${plan.map((r) => r['QUERY PLAN']).join('\n')}`);
    }
  }

  console.log(`\nmedian at ${SIZES.at(-1)} ÷ median at ${SIZES[0]} entries (target ≤ 1.5):`);
  for (const [name, values] of medians) console.log(`  ${name}: ${((values.at(-1) ?? NaN) / (values[0] ?? NaN)).toFixed(2)}`);

  // The export of every entry of the largest size, read as fast as this process can, against PostgreSQL's own
  // client writing the same rows in the same order to a file: rounds alternate, so the machine's other tenants
  // weigh on both alike; the ratio is the median of each round's.
  const largest = SIZES.at(-1) ?? 0;
  const url = `${service.url}/api/v1/audit/export`;
  const pid = service.pid;
  const exportOnce = async () => {
    const baseline = rssBytes(pid);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 20);
    const started = performance.now();
    const { bytes, lines } = await new Promise<{ bytes: number; lines: number }>((resolve, reject) => {
      http
        .get(url, { headers }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`export: ${String(res.statusCode)}`));
          const count = { bytes: 0, lines: 0 };
          res.on('data', (chunk: Buffer) => {
            count.bytes += chunk.byteLength;
            for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) count.lines++;
          });
          res.on('end', () => resolve(count));
          res.on('error', reject);
        })
        .on('error', reject);
    });
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    if (lines !== largest) throw new Error(`the export had ${lines} lines for ${largest} entries`);
    return { seconds, bytes, baseline, peak };
  };
  const file = path.join(os.tmpdir(), `agent-org-bench-audit-${process.pid}.copy`);
  const copyOnce = () => {
    const started = performance.now();
    execFileSync(PSQL, [bench.db.url, '-X', '-q', '-c', `\\copy (select * from audit_entries order by occurred_at, id) to '${file}'`], { stdio: ['ignore', 'ignore', 'inherit'] });
    const seconds = (performance.now() - started) / 1000;
    const bytes = statSync(file).size;
    rmSync(file, { force: true });
    return { seconds, bytes };
  };
  console.log(`\nGET /api/v1/audit/export of ${largest} entries (NDJSON) against psql \\copy of the same rows to a file, ${EXPORT_ROUNDS} alternating rounds:`);
  console.log('| round | export s | entries/s | MiB | RSS before → peak (grew) MiB | psql \\copy s | entries/s | MiB | export ÷ psql rate |\n|---|---|---|---|---|---|---|---|---|');
  const ratios: number[] = [];
  const growths: number[] = [];
  for (let round = 1; round <= EXPORT_ROUNDS; round++) {
    const exported = await exportOnce();
    const copied = copyOnce();
    const ratio = copied.seconds / exported.seconds;
    ratios.push(ratio);
    growths.push(exported.peak - exported.baseline);
    console.log(
      `| ${round} | ${exported.seconds.toFixed(2)} | ${Math.round(largest / exported.seconds)} | ${MiB(exported.bytes)} | ${MiB(exported.baseline)} → ${MiB(exported.peak)} (${MiB(exported.peak - exported.baseline)}) | ` +
        `${copied.seconds.toFixed(2)} | ${Math.round(largest / copied.seconds)} | ${MiB(copied.bytes)} | ${ratio.toFixed(2)} |`,
    );
  }
  console.log(`export rate ÷ psql rate, median of the rounds: ${median(ratios).toFixed(2)} (target ≥ 0.5)`);
  console.log(`service RSS growth during an export, largest of the rounds: ${MiB(Math.max(...growths))} MiB (target < 64)`);

  console.log('\nPlans (EXPLAIN ANALYZE of the page statement, first page):');
  console.log(plans.join('\n\n'));
} finally {
  await maintenance.end().catch(() => {});
  await service?.stop();
  await bench.close();
}
