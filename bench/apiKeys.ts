// What authenticating with an API key costs against a session token (CONTRACT §3.5): GET /auth/me and
// POST /approvals, each sent by one user with its key and with its session's access token as a bearer, in
// alternating rounds on one service in a process of its own (autocannon in another), CPU per request beside
// req/s and the latencies.
// Run by hand: npm run bench:api-keys  (BENCH_DURATION, BENCH_CONNECTIONS, BENCH_ROUNDS, BENCH_CPU_PROF as for the others).
import { z } from 'zod';
import { systemClock } from '../src/contracts/clock.ts';
import { createAccount } from '../src/services/auth/accounts.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { alternateRounds, CONNECTIONS, DURATION_S, machine, PAIR_ROUNDS, pairingReport, startBenchDatabase, startServiceProcess, type ServerProcess } from './lib.ts';

const PASSWORD = 'quiet lantern orbit 7319';
const TARGET = 0.9;

const Created = z.object({ data: z.object({ secret: z.string() }) });
const Me = z.object({ data: z.object({ username: z.string(), api_key: z.object({ scopes: z.array(z.string()) }).optional() }) });

const bench = await startBenchDatabase('api-keys');
let service: ServerProcess | undefined;
try {
  const em = bench.db.orm.em.fork();
  const clock = systemClock;
  await em.transactional((tx) => createAccount({ em: tx, clock }, { username: 'ceo', password: PASSWORD, role: 'ceo', mustChangePassword: false }));
  // A manager: one of the roles that may request approvals. Key and session belong to this one user, so the
  // credential is the only thing the two sides differ in.
  const user = await em.transactional((tx) => createAccount({ em: tx, clock }, { username: 'bench', password: PASSWORD, role: 'manager', mustChangePassword: false }));
  const session = await em.transactional((tx) => issueSession({ em: tx, clock, config: bench.config }, user.id, { ip: '127.0.0.1', userAgent: 'bench' }));

  // Rate limits off: one user sending thousands of requests a second is the point here, and creating
  // approvals is otherwise limited to 20 a minute per user (CONTRACT §5).
  service = await startServiceProcess(bench, { RATE_LIMITS_ENABLED: 'false' });
  const base = `${service.url}/api/v1`;
  const bySession = { authorization: `Bearer ${session.accessToken}` };

  // The key is issued the way a user gets one: through the API, with the session.
  const issued = await fetch(`${base}/api-keys`, {
    method: 'POST',
    headers: { ...bySession, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', scopes: ['approvals:write'] }),
  });
  if (issued.status !== 201) throw new Error(`POST /api-keys answered ${issued.status}: ${await issued.text()}`);
  const byKey = { authorization: `Bearer ${Created.parse(await issued.json()).data.secret}` };

  // Each side answers as the same user, and the key is read as a key.
  for (const [name, headers] of [['key', byKey], ['session', bySession]] as const) {
    const res = await fetch(`${base}/auth/me`, { headers });
    const me = Me.parse(await res.json());
    if (me.data.username !== 'bench' || (name === 'key') !== (me.data.api_key !== undefined)) throw new Error(`GET /auth/me by ${name} answered ${JSON.stringify(me)}`);
  }

  const me = await alternateRounds({ server: service, url: `${base}/auth/me`, opts: { headers: byKey } }, { server: service, url: `${base}/auth/me`, opts: { headers: bySession } });

  // One body, sent again and again: without an Idempotency-Key every request creates a new approval, so
  // repeating it is what a busy agent does, not a replay.
  const approval = JSON.stringify({ action_type: 'deploy:production', title: 'Bench approval', description: 'Created by the API-key benchmark', risk_level: 'low' });
  const post = { method: 'POST', body: approval, headers: { 'content-type': 'application/json' } };
  const create = await alternateRounds(
    { server: service, url: `${base}/approvals`, opts: { headers: byKey } },
    { server: service, url: `${base}/approvals`, opts: { headers: bySession } },
    post,
  );

  console.log(`# API keys against session tokens\n${machine()}`);
  console.log(`${CONNECTIONS} connections, ${PAIR_ROUNDS} alternating rounds of ${DURATION_S} s per side after a 3 s warm-up of each; RATE_LIMITS_ENABLED=false\n`);
  console.log(pairingReport('GET /api/v1/auth/me, API key', 'session token (bearer)', me, { throughput: TARGET }).join('\n'));
  console.log('');
  console.log(pairingReport('POST /api/v1/approvals, API key', 'session token (bearer)', create, { throughput: TARGET }).join('\n'));
} finally {
  await service?.stop();
  await bench.close();
}
