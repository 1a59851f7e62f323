// GET /api/v1/approvals?status=pending over 100,000 approvals (first vs deep page, and the first against a raw Fastify + pg
// route running the service's own list statement and envelope) and approve throughput on distinct approvals.
// Run by hand: node_modules/.bin/node bench/approvals.ts  (BENCH_DURATION, BENCH_CONNECTIONS override 10 s and 50).
import fs from 'node:fs/promises';
import Fastify from 'fastify';
import pg from 'pg';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { z } from 'zod';
import { kysely } from '../src/db/kysely.ts';
import { createAccount } from '../src/services/auth/accounts.ts';
import { listQuery } from '../src/services/approvals/store.ts';
import { APPROVALS_LIST } from '../src/services/approvals/approvals.ts';
import { effectiveStatus, urgencyOf } from '../src/services/approvals/response.ts';
import { encodeCursor } from '../src/services/pagination.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { AUTOCANNON_PACKAGE, CONNECTIONS, DURATION_S, load, ratio, rawUser, runAutocannon, startBenchService, tableRow } from './lib.ts';

const APPROVALS = 100_000;
const DEEP_ROWS = 50_000;
const DECISIONS = 20_000;

const PageJson = z.object({
  data: z.array(z.object({ id: z.string(), status: z.literal('pending') })),
  pagination: z.object({ next_cursor: z.string().nullable() }),
});

// The CLI repeats one URL per connection; distinct approvals need the API's setupRequest, which hands every
// request (across all connections) the next id of the list. With a fixed amount autocannon only notices it is
// done at its next one-second tick, so its duration is rounded up to whole seconds (20,000 decisions in 19.1 s
// read as 20 s, 5 % low): the run time reported is from the start to the last response instead.
const DECIDE_SCRIPT = `
const autocannon = require(${JSON.stringify(AUTOCANNON_PACKAGE)});
const [base, token, idsFile, connections] = process.argv.slice(1);
const ids = JSON.parse(require('node:fs').readFileSync(idsFile, 'utf8'));
let next = 0;
const started = performance.now();
let lastResponse = started;
const instance = autocannon({
  url: base, connections: Number(connections), amount: ids.length,
  headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' },
  requests: [{ method: 'POST', body: '{"comment":null}', setupRequest: (req) => ({ ...req, path: '/api/v1/approvals/' + ids[next++ % ids.length] + '/approve' }) }],
}, (err, result) => {
  if (err) { console.error(err); process.exit(1); }
  process.stdout.write(JSON.stringify({ ...result, duration: (lastResponse - started) / 1000 }));
});
instance.on('response', () => { lastResponse = performance.now(); });
`;

// Rate limits off: one user sending tens of thousands of requests a minute is the point here.
const bench = await startBenchService({ RATE_LIMITS_ENABLED: 'false' }, { name: 'approvals' });
const { service } = bench;
const raw = Fastify();
const pool = new pg.Pool({ connectionString: service.db.url, max: 20 });
try {
  const { deps } = service;
  const em = deps.orm.em.fork();
  const db = kysely(em);
  const signIn = async (username: string, role: 'manager' | 'board_member') => {
    const user = await createAccount({ em, clock: deps.clock }, { username, password: 'quiet lantern orbit 7319', role, mustChangePassword: false });
    const session = await em.transactional((tx) => issueSession({ em: tx, clock: deps.clock, config: deps.config }, user.id, { ip: '127.0.0.1', userAgent: 'bench' }));
    return { user, token: session.accessToken };
  };
  const requester = await signIn('bench_requester', 'manager');
  const approver = await signIn('bench_approver', 'board_member');

  // One statement: 60 % pending (a third of them with a deadline a day away), the rest decided or expired;
  // rows come in pairs sharing a millisecond, so the id tie-break of the keyset is exercised too.
  const seedStarted = performance.now();
  // SQL by hand: 100,000 generated rows in one INSERT ... SELECT generate_series, which the builder cannot say.
  await sql`insert into approvals (id, action_type, title, description, requested_by_id, requested_by, risk_level, status,
                            created_at, expires_at, decided_at, decided_by_id, decided_by, decision_reason, task_id, metadata)
     select gen_random_uuid(),
            (array['deploy:production', 'budget:increase', 'hire:agent', 'access:grant', 'data:export'])[g % 5 + 1],
            'Bench approval ' || g, 'Seeded for the list benchmark', ${requester.user.id}::uuid, ${requester.user.username},
            (array['low', 'medium', 'high', 'critical'])[g % 4 + 1],
            s.status,
            base - (g / 2) * interval '1 millisecond',
            case when s.status = 'pending' and g % 3 = 0 then base + interval '1 day'
                 when s.status = 'expired' then base - interval '1 hour' end,
            case when s.status in ('approved', 'rejected') then base end,
            case when s.status in ('approved', 'rejected') then ${approver.user.id}::uuid end,
            case when s.status in ('approved', 'rejected') then ${approver.user.username} end,
            case when s.status = 'rejected' then 'no' end,
            'task-' || (g % 1000), jsonb_build_object('n', g::text)
       from generate_series(1, ${APPROVALS}) as g,
            lateral (select case when g % 10 < 6 then 'pending' when g % 10 < 8 then 'approved' when g % 10 = 8 then 'rejected' else 'expired' end as status) s,
            (select now() as base) b`.execute(db);
  await sql`analyze approvals`.execute(db); // a maintenance statement: no builder for it

  const seedMs = performance.now() - seedStarted;

  const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  const headers = { authorization: `Bearer ${approver.token}` };
  // The deep cursor is taken the way a client gets one: by walking pages of 200 through the API.
  let cursor: string | null = null;
  for (let seen = 0; seen < DEEP_ROWS; ) {
    const res = await fetch(`${base}/api/v1/approvals?status=pending&limit=200${cursor ? `&cursor=${cursor}` : ''}`, { headers });
    const page = PageJson.parse(await res.json());
    seen += page.data.length;
    cursor = page.pagination.next_cursor;
    if (cursor === null) throw new Error(`ran out of pending approvals after ${seen}`);
  }
  const first = `${base}/api/v1/approvals?status=pending&limit=50`;
  const deep = `${base}/api/v1/approvals?status=pending&limit=50&cursor=${cursor}`;
  if (PageJson.parse(await (await fetch(deep, { headers })).json()).data.length !== 50) throw new Error('the deep page is not full');

  // The plans the list query gets: the service's own statement (store.listQuery), first page and a deep keyset position.
  const now = new Date();
  const position = await listQuery(em, { now, status: 'pending', limit: 1 }).offset(DEEP_ROWS).executeTakeFirstOrThrow();
  const explain = async (after?: { createdAt: Date; id: string }) => {
    const plan = await listQuery(em, { now, status: 'pending', after, limit: 51 }).explain('text', sql`analyze, buffers off, timing off, summary on`);
    return plan.map((line) => String(line['QUERY PLAN']));
  };
  const firstPlan = await explain();
  const deepPlan = await explain({ createdAt: position.createdAt, id: position.id });

  // The ceiling: the bearer lookup, then the statement the service runs for the first pending page (store.listQuery,
  // compiled once; its Date parameters are "now" and are renewed per request), the same response fields and
  // envelope with a signed cursor, on a plain pg pool with no framework of ours.
  const statement = listQuery(em, { now: new Date(), status: 'pending', limit: 51 }).compile();
  raw.get('/approvals', async (req, reply) => {
    if (!(await rawUser(pool, req.headers.authorization))) return reply.code(401).send({ error: 'unauthorized' });
    const now = new Date();
    const { rows } = await pool.query<RawApproval>(statement.sql, statement.parameters.map((p) => (p instanceof Date ? now : p)));
    const page = rows.slice(0, 50);
    const last = page.at(-1);
    return {
      data: page.map((a) => {
        const status = effectiveStatus({ status: a.status, expiresAt: a.expires_at }, now);
        const seconds = a.expires_at === null ? null : status === 'pending' ? Math.max(0, Math.ceil((a.expires_at.getTime() - now.getTime()) / 1000)) : 0;
        return {
          id: a.id,
          action_type: a.action_type,
          title: a.title,
          description: a.description,
          requested_by: a.requested_by,
          risk_level: a.risk_level,
          status,
          created_at: a.created_at.toISOString(),
          expires_at: a.expires_at?.toISOString() ?? null,
          decided_at: a.decided_at?.toISOString() ?? null,
          decided_by: a.decided_by,
          decision_reason: a.decision_reason,
          task_id: a.task_id,
          metadata: a.metadata,
          seconds_remaining: seconds,
          urgency_level: urgencyOf(seconds),
        };
      }),
      error: null,
      error_detail: null,
      success: true,
      pagination: { limit: 50, next_cursor: rows.length > 50 && last ? encodeCursor(deps.secret, APPROVALS_LIST, [last.created_at.toISOString(), last.id]) : null, has_more: rows.length > 50 },
    };
  });
  const rawFirst = `${await raw.listen({ port: 0, host: '127.0.0.1' })}/approvals?status=pending&limit=50`;
  if (PageJson.parse(await (await fetch(rawFirst, { headers })).json()).data.length !== 50) throw new Error('the raw page is not full');

  await load(first, { headers, durationS: 3 });
  await load(deep, { headers, durationS: 3 });
  await load(rawFirst, { headers, durationS: 3 });
  const firstResult = await load(first, { headers });
  const rawResult = await load(rawFirst, { headers });
  const deepResult = await load(deep, { headers });

  // Decisions: distinct pending approvals without a deadline, each approved once.
  const targets = await db
    .selectFrom('approvals')
    .select('id')
    .where('status', '=', 'pending')
    .where('expiresAt', 'is', null)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .limit(DECISIONS)
    .execute();
  const approvedCount = async () => {
    const count = await db
      .selectFrom('approvals')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'approved')
      .executeTakeFirstOrThrow();
    return Number(count.n);
  };
  const approvedBefore = await approvedCount();
  const idsFile = path.join(bench.dataDir, 'decide-ids.json');
  await fs.writeFile(idsFile, JSON.stringify(targets.map((t) => t.id)));
  const decide = await runAutocannon(['-e', DECIDE_SCRIPT, base, approver.token, idsFile, String(CONNECTIONS)]);
  const newlyApproved = (await approvedCount()) - approvedBefore;

  const out = [
    `### ${new Date().toISOString().slice(0, 10)} — ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.versions.node}, ${os.type()} ${os.release()}`,
    '',
    `Load average when the runs ended: ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')} (1/5/15 min; the machine is shared, so numbers vary with what else runs).`,
    '',
    `Seeded ${APPROVALS.toLocaleString('en-US')} approvals (60 % pending) with one INSERT … SELECT generate_series in ${(seedMs / 1000).toFixed(1)} s.`,
    '',
    `GET /api/v1/approvals?status=pending&limit=50, ${CONNECTIONS} connections, ${DURATION_S} s each after a 3 s warm-up, autocannon in its own process:`,
    '',
    '| page | req/s | p50 ms | p99 ms | non-2xx | errors |',
    '|---|---:|---:|---:|---:|---:|',
    tableRow('first', firstResult),
    tableRow(`deep (after ${DEEP_ROWS.toLocaleString('en-US')} pending rows)`, deepResult),
    tableRow('raw Fastify + pg, same statement and envelope (first page)', rawResult),
    '',
    `first page / raw throughput ratio: **${ratio(firstResult, rawResult)}** (target ≥ 0.6)`,
    '',
    `deep/first p99 ratio: **${(deepResult.p99 / firstResult.p99).toFixed(2)}**, throughput ratio: **${(deepResult.requestsPerSecond / firstResult.requestsPerSecond).toFixed(2)}**`,
    '',
    `POST /api/v1/approvals/{id}/approve on ${targets.length.toLocaleString('en-US')} distinct pending approvals, ${CONNECTIONS} connections:`,
    '',
    '| decisions/s (2xx ÷ run time) | p50 ms | p99 ms | 2xx | non-2xx | errors | rows newly approved in the database |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    `| ${(decide.ok / decide.seconds).toFixed(0)} | ${decide.p50.toFixed(1)} | ${decide.p99.toFixed(1)} | ${decide.ok} | ${decide.non2xx} | ${decide.errors} | ${newlyApproved} |`,
    '',
    'Plans of the list query (first page, then the deep page):',
    '',
    '```',
    ...firstPlan,
    '',
    ...deepPlan,
    '```',
  ];
  console.log(out.join('\n'));
} finally {
  await raw.close();
  await pool.end();
  await bench.close();
}

type RawApproval = {
  id: string;
  action_type: string;
  title: string;
  description: string | null;
  requested_by: string;
  risk_level: string;
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  created_at: Date;
  expires_at: Date | null;
  decided_at: Date | null;
  decided_by: string | null;
  decision_reason: string | null;
  task_id: string | null;
  metadata: unknown;
};
