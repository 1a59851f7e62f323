// GET /api/v1/users?limit=50 over 10,000 users: the first page against a raw Fastify + pg route running the same
// keyset statement and envelope (each in a process of its own, alternating rounds, CPU per request), and a page
// ~9,000 rows deep against the first (keyset pagination).
// Run by hand: npm run bench:users  (BENCH_DURATION, BENCH_CONNECTIONS, BENCH_ROUNDS override 10 s, 50 and 5).
import { z } from 'zod';
import { systemClock } from '../src/contracts/clock.ts';
import { createAccount } from '../src/services/auth/accounts.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import {
  alternateRounds,
  CONNECTIONS,
  CPU_TABLE_HEAD,
  cpuTableRow,
  DURATION_S,
  loadTotals,
  machineSpec,
  measure,
  medianRun,
  pairingReport,
  PAIR_ROUNDS,
  startBenchDatabase,
  startRawCeiling,
  startServiceProcess,
  type ServerProcess,
} from './lib.ts';

const USERS = 10_000;
const DEEP_ROWS = 9_000;

const PageJson = z.object({
  data: z.array(z.object({ id: z.string() })),
  pagination: z.object({ next_cursor: z.string().nullable() }),
});

const bench = await startBenchDatabase('users');
let service: ServerProcess | undefined;
let raw: ServerProcess | undefined;
try {
  const em = bench.db.orm.em.fork();
  const clock = systemClock;
  const reader = await createAccount({ em, clock }, { username: 'bench_reader', password: 'bench reader password', role: 'observer', mustChangePassword: false });
  const session = await em.transactional((tx) => issueSession({ em: tx, clock, config: bench.config }, reader.id, { ip: '127.0.0.1', userAgent: 'bench' }));
  // One statement; rows come in pairs sharing a timestamp, so the id tie-break is exercised too.
  // A set-returning bulk seed (generate_series) has no query-builder form; one statement for 10,000 rows.
  const connection = em.getConnection();
  await connection.execute(
    `insert into users (id, username, username_key, username_skeleton, password_hash, role, must_change_password, created_at, updated_at)
     select gen_random_uuid(), 'bench_' || g, md5('key ' || g), md5('skeleton ' || g), 'not-a-hash', 'observer', false,
            timestamptz '2026-01-01T00:00:00Z' + (g / 2) * interval '1 millisecond',
            timestamptz '2026-01-01T00:00:00Z' + (g / 2) * interval '1 millisecond'
       from generate_series(1, ?) as g`,
    [USERS],
  );
  await connection.execute('analyze users'); // a maintenance statement: no builder for it

  // Rate limits off: one user sending tens of thousands of requests a minute is the point here.
  service = await startServiceProcess(bench, { RATE_LIMITS_ENABLED: 'false' });
  // The ceiling: the bearer lookup, the statement the service runs for the first page and the same envelope
  // with a signed cursor, on a plain pg pool (bench/rawCeiling.ts).
  raw = await startRawCeiling(bench);
  const headers = { authorization: `Bearer ${session.accessToken}` };

  // The deep cursor is taken the way a client gets one: by walking pages of 200 through the API.
  let cursor: string | null = null;
  for (let seen = 0; seen < DEEP_ROWS; ) {
    const res = await fetch(`${service.url}/api/v1/users?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { headers });
    const page = PageJson.parse(await res.json());
    seen += page.data.length;
    cursor = page.pagination.next_cursor;
    if (cursor === null) throw new Error(`ran out of users after ${seen}`);
  }
  const first = `${service.url}/api/v1/users?limit=50`;
  const deep = `${service.url}/api/v1/users?limit=50&cursor=${cursor}`;
  const rawFirst = `${raw.url}/users?limit=50`;
  for (const url of [deep, rawFirst]) {
    if (PageJson.parse(await (await fetch(url, { headers })).json()).data.length !== 50) throw new Error(`the page of ${url} is not full`);
  }

  const firstPage = await alternateRounds({ server: service, url: first }, { server: raw, url: rawFirst }, { headers });
  await loadTotals(deep, { headers, durationS: 3 });
  const deepPage = await measure(service, deep, { headers });
  const firstMedian = medianRun(firstPage.app);

  console.log(`GET /api/v1/users?limit=50 over ${USERS} users, ${CONNECTIONS} connections, ${PAIR_ROUNDS} alternating rounds of ${DURATION_S} s each (after a 3 s warm-up)`);
  console.log(machineSpec());
  console.log(pairingReport('first page', 'raw Fastify + pg, same statement and envelope', firstPage, { throughput: 0.9, p99: 1.5 }).join('\n'));
  console.log(`\n${CPU_TABLE_HEAD}`);
  console.log(cpuTableRow(`deep page (after ${DEEP_ROWS} rows)`, deepPage));
  console.log(`\ndeep ÷ first page (its median round): throughput ${(deepPage.requestsPerSecond / firstMedian.requestsPerSecond).toFixed(3)}, p50 ${(deepPage.p50 / firstMedian.p50).toFixed(3)}`);
} finally {
  await raw?.stop();
  await service?.stop();
  await bench.close();
}
