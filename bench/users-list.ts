// GET /api/v1/users?limit=50 over 10,000 users: the first page versus a page ~9,000 rows deep (keyset pagination),
// and the first page against a raw Fastify + pg route running the service's own keyset statement and envelope.
// Run by hand: node_modules/.bin/node bench/users-list.ts  (BENCH_DURATION, BENCH_CONNECTIONS override 10 s and 50).
import Fastify from 'fastify';
import pg from 'pg';
import { z } from 'zod';
import { sql } from 'kysely';
import { kysely } from '../src/db/kysely.ts';
import { createAccount } from '../src/services/auth/accounts.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { encodeCursor } from '../src/services/pagination.ts';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { USERS_LIST } from '../src/services/users/users.ts';
import { CONNECTIONS, DURATION_S, load, machineSpec, ratio, rawUser, startBenchService, tableRow } from './lib.ts';

const USERS = 10_000;
const DEEP_ROWS = 9_000;

const PageJson = z.object({
  data: z.array(z.object({ id: z.string() })),
  pagination: z.object({ next_cursor: z.string().nullable() }),
});

// Rate limits off: one user sending tens of thousands of requests a minute is the point here.
const bench = await startBenchService({ RATE_LIMITS_ENABLED: 'false' }, { name: 'users' });
const { service } = bench;
const raw = Fastify();
const pool = new pg.Pool({ connectionString: service.db.url, max: 20 });
try {
  const em = service.deps.orm.em.fork();
  const reader = await createAccount({ em, clock: service.deps.clock }, { username: 'bench_reader', password: 'bench reader password', role: 'observer', mustChangePassword: false });
  const session = await em.transactional((tx) => issueSession({ em: tx, clock: service.deps.clock, config: service.deps.config }, reader.id, { ip: '127.0.0.1', userAgent: 'bench' }));
  // One statement; rows come in pairs sharing a timestamp, so the id tie-break is exercised too.
  // A set-returning bulk seed (generate_series) has no query-builder form; one statement for 10,000 rows.
  await sql`insert into users (id, username, username_key, username_skeleton, password_hash, role, must_change_password, created_at, updated_at)
     select gen_random_uuid(), 'bench_' || g, md5('key ' || g), md5('skeleton ' || g), 'not-a-hash', 'observer', false,
            timestamptz '2026-01-01T00:00:00Z' + (g / 2) * interval '1 millisecond',
            timestamptz '2026-01-01T00:00:00Z' + (g / 2) * interval '1 millisecond'
       from generate_series(1, ${USERS}) as g`.execute(kysely(em));
  await sql`analyze users`.execute(kysely(em)); // a maintenance statement: no builder for it

  const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  const headers = { authorization: `Bearer ${session.accessToken}` };
  // The deep cursor is taken the way a client gets one: by walking pages of 200 through the API.
  let cursor: string | null = null;
  for (let seen = 0; seen < DEEP_ROWS; ) {
    const res = await fetch(`${base}/api/v1/users?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { headers });
    const page = PageJson.parse(await res.json());
    seen += page.data.length;
    cursor = page.pagination.next_cursor;
    if (cursor === null) throw new Error(`ran out of users after ${seen}`);
  }
  const first = `${base}/api/v1/users?limit=50`;
  const deep = `${base}/api/v1/users?limit=50&cursor=${cursor}`;
  const check = PageJson.parse(await (await fetch(deep, { headers })).json());
  if (check.data.length !== 50) throw new Error('the deep page is not full');

  // The ceiling: the bearer lookup, then the statement the service runs for the first page (built as
  // services/users/store.ts userPage builds it), and the same envelope with a signed cursor, on a plain pg pool.
  const statement = kysely(em)
    .selectFrom('users')
    .selectAll('users')
    .select((eb) =>
      jsonArrayFrom(eb.selectFrom('user_org_roles as r').select(['r.role as role', 'r.scopedDepartments as scopedDepartments']).whereRef('r.userId', '=', 'users.id').orderBy('r.role')).as('grants'),
    )
    .orderBy('users.createdAt')
    .orderBy('users.id')
    .limit(51)
    .compile();
  raw.get('/users', async (req, reply) => {
    if (!(await rawUser(pool, req.headers.authorization))) return reply.code(401).send({ error: 'unauthorized' });
    const { rows } = await pool.query<RawUser>(statement.sql, [...statement.parameters]);
    const page = rows.slice(0, 50);
    const last = page.at(-1);
    return {
      data: page.map((u) => ({
        id: u.id,
        username: u.username,
        role: u.role,
        must_change_password: u.must_change_password,
        org_roles: u.grants.map((g) => g.role).sort(),
        scoped_departments: [...new Set(u.grants.flatMap((g) => g.scopedDepartments))].sort(),
        created_at: u.created_at.toISOString(),
        updated_at: u.updated_at.toISOString(),
      })),
      error: null,
      error_detail: null,
      success: true,
      pagination: { limit: 50, next_cursor: rows.length > 50 && last ? encodeCursor(service.deps.secret, USERS_LIST, [last.created_at.toISOString(), last.id]) : null, has_more: rows.length > 50 },
    };
  });
  const rawFirst = `${await raw.listen({ port: 0, host: '127.0.0.1' })}/users?limit=50`;
  if (PageJson.parse(await (await fetch(rawFirst, { headers })).json()).data.length !== 50) throw new Error('the raw page is not full');

  await load(first, { headers, durationS: 3 });
  await load(deep, { headers, durationS: 3 });
  await load(rawFirst, { headers, durationS: 3 });
  const firstResult = await load(first, { headers });
  const rawResult = await load(rawFirst, { headers });
  const deepResult = await load(deep, { headers });

  console.log(`GET /api/v1/users?limit=50 over ${USERS} users, ${CONNECTIONS} connections, ${DURATION_S} s each (after a 3 s warm-up)`);
  console.log(machineSpec());
  console.log('| page | req/s | p50 ms | p99 ms | non-2xx | errors |');
  console.log('|---|---|---|---|---|---|');
  console.log(tableRow('first', firstResult));
  console.log(tableRow(`deep (after ${DEEP_ROWS} rows)`, deepResult));
  console.log(tableRow('raw Fastify + pg, same statement and envelope (first page)', rawResult));
  console.log(`first page / raw throughput ratio: ${ratio(firstResult, rawResult)} (target ≥ 0.6)`);
  console.log(`deep/first throughput ratio: ${(deepResult.requestsPerSecond / firstResult.requestsPerSecond).toFixed(3)}`);
  console.log(`deep/first p50 latency ratio: ${(deepResult.p50 / firstResult.p50).toFixed(3)}`);
} finally {
  await raw.close();
  await pool.end();
  await bench.close();
}

type RawUser = {
  id: string;
  username: string;
  role: string;
  must_change_password: boolean;
  created_at: Date;
  updated_at: Date;
  grants: { role: string; scopedDepartments: string[] }[];
};
