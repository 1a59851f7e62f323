// Session lookup and login cost: GET /auth/me (bearer) against a raw Fastify + pg route doing the same lookup,
// the 401 path, and login throughput against the machine's raw argon2 verify rate.
import Fastify from 'fastify';
import pg from 'pg';
import { createAccount } from '../src/services/auth/accounts.ts';
import { hashPassword, verifyPassword } from '../src/services/auth/passwords.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { sha256 } from '../src/services/auth/tokens.ts';
import { load, machine, startBenchService, TABLE_HEAD, tableRow } from './lib.ts';

const PASSWORD = 'bench password 1234';
// Rate limits off: one user sending thousands of requests a second is the point here.
const bench = await startBenchService({ RATE_LIMITS_ENABLED: 'false' });
const { service } = bench;
const raw = Fastify();
const pool = new pg.Pool({ connectionString: service.db.url, max: 20 });
try {
  const em = service.deps.orm.em.fork();
  await em.transactional((tx) => createAccount({ em: tx, clock: service.deps.clock }, { username: 'ceo', password: PASSWORD, role: 'ceo', mustChangePassword: false }));
  const user = await em.transactional((tx) => createAccount({ em: tx, clock: service.deps.clock }, { username: 'bench', password: PASSWORD, role: 'observer', mustChangePassword: false }));
  const session = await em.transactional((tx) => issueSession({ em: tx, clock: service.deps.clock, config: service.deps.config }, user.id, { ip: '127.0.0.1', userAgent: 'bench' }));
  const base = await service.app.listen({ port: 0, host: '127.0.0.1' });

  // The ceiling: the same token → session → user lookup, no framework of ours around it.
  raw.get('/me', async (req, reply) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token) return reply.code(401).send({ error: 'unauthorized' });
    const { rows } = await pool.query(
      'select u.id, u.username, u.role, u.must_change_password from sessions s join users u on u.id = s.user_id where s.token_hash = $1 and s.revoked_at is null and s.expires_at > now()',
      [sha256(token)],
    );
    return rows[0] ? { data: rows[0] } : reply.code(401).send({ error: 'unauthorized' });
  });
  const rawBase = await raw.listen({ port: 0, host: '127.0.0.1' });
  const headers = { authorization: `Bearer ${session.accessToken}` };

  await load(`${base}/api/v1/auth/me`, { headers, durationS: 3 });
  const me = await load(`${base}/api/v1/auth/me`, { headers });
  const ceiling = await load(`${rawBase}/me`, { headers });
  const anonymous = await load(`${base}/api/v1/auth/me`);

  // Raw argon2 verify rate with as many verifications in flight as the login run has connections.
  const LOGIN_CONNECTIONS = 4;
  const LOGIN_ROUNDS = 3;
  const phc = await hashPassword(PASSWORD);
  const verifyRate = async (seconds: number): Promise<number> => {
    let verified = 0;
    const until = Date.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: LOGIN_CONNECTIONS }, async () => {
        while (Date.now() < until) if (await verifyPassword(phc, PASSWORD)) verified++;
      }),
    );
    return verified / seconds;
  };
  // Alternating rounds, each login run divided by the verify rate measured right before it: the host's
  // other tenants come and go and move both, and one pair of runs minutes apart scattered by ±10 %.
  const loginBody = JSON.stringify({ username: 'bench', password: PASSWORD });
  // Warmed up like the other routes, so the first round does not pay for the login path's compilation.
  await load(`${base}/api/v1/auth/login`, { connections: LOGIN_CONNECTIONS, method: 'POST', headers: { 'content-type': 'application/json' }, body: loginBody, durationS: 3 });
  const loginRounds: { verifyRate: number; login: Awaited<ReturnType<typeof load>>; ratio: number }[] = [];
  for (let round = 0; round < LOGIN_ROUNDS; round++) {
    const rate = await verifyRate(5);
    const result = await load(`${base}/api/v1/auth/login`, {
      connections: LOGIN_CONNECTIONS,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: loginBody,
    });
    loginRounds.push({ verifyRate: rate, login: result, ratio: result.requestsPerSecond / rate });
  }
  const median = [...loginRounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(LOGIN_ROUNDS / 2)]!;
  const login = median.login;

  console.log(`# auth benchmarks\n${machine()}\n`);
  console.log(TABLE_HEAD);
  console.log(tableRow('GET /api/v1/auth/me (bearer)', me));
  console.log(tableRow('raw Fastify + pg, same lookup', ceiling));
  console.log(tableRow('GET /api/v1/auth/me (no credential, 401)', anonymous));
  console.log(tableRow(`POST /api/v1/auth/login (${LOGIN_CONNECTIONS} connections)`, login));
  console.log(`\nme / raw ratio: ${(me.requestsPerSecond / ceiling.requestsPerSecond).toFixed(2)} (target ≥ 0.7), me p99 ${me.p99.toFixed(1)} ms (target < 50)`);
  console.log(`401 path / authenticated: ${(anonymous.requestsPerSecond / me.requestsPerSecond).toFixed(2)} (target ≥ 1)`);
  for (const [i, r] of loginRounds.entries()) console.log(`login round ${i + 1}: ${r.login.requestsPerSecond.toFixed(1)}/s vs raw argon2 verify ${r.verifyRate.toFixed(1)}/s just before: ${(r.ratio * 100).toFixed(0)}%`);
  console.log(`login ${login.requestsPerSecond.toFixed(1)}/s vs raw argon2 verify ${median.verifyRate.toFixed(1)}/s: ${(median.ratio * 100).toFixed(0)}% (median of ${LOGIN_ROUNDS} rounds; target ≥ 80%)`);
} finally {
  await raw.close();
  await pool.end();
  await bench.close();
}
