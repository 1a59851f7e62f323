// Session lookup and login cost: GET /auth/me (bearer) against a raw Fastify + pg route doing the same lookup
// (each in a process of its own, alternating rounds, CPU per request), the 401 path, and login throughput
// against the machine's raw argon2 verify rate.
import { systemClock } from '../src/contracts/clock.ts';
import { createAccount } from '../src/services/auth/accounts.ts';
import { hashPassword, verifyPassword } from '../src/services/auth/passwords.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { alternateRounds, CPU_TABLE_HEAD, cpuTableRow, load, machine, measure, medianRun, pairingReport, startBenchDatabase, startRawCeiling, startServiceProcess, TABLE_HEAD, tableRow, type ServerProcess } from './lib.ts';

const PASSWORD = 'quiet lantern orbit 7319';
const bench = await startBenchDatabase('auth');
let service: ServerProcess | undefined;
let raw: ServerProcess | undefined;
try {
  const em = bench.db.orm.em.fork();
  const clock = systemClock;
  await em.transactional((tx) => createAccount({ em: tx, clock }, { username: 'ceo', password: PASSWORD, role: 'ceo', mustChangePassword: false }));
  const user = await em.transactional((tx) => createAccount({ em: tx, clock }, { username: 'bench', password: PASSWORD, role: 'observer', mustChangePassword: false }));
  const session = await em.transactional((tx) => issueSession({ em: tx, clock, config: bench.config }, user.id, { ip: '127.0.0.1', userAgent: 'bench' }));

  // Rate limits off: one user sending thousands of requests a second is the point here.
  service = await startServiceProcess(bench, { RATE_LIMITS_ENABLED: 'false' });
  // The ceiling: the same token → session → user lookup, no framework of ours around it.
  raw = await startRawCeiling(bench);
  const base = service.url;
  const headers = { authorization: `Bearer ${session.accessToken}` };

  const me = await alternateRounds({ server: service, url: `${base}/api/v1/auth/me` }, { server: raw, url: `${raw.url}/me` }, { headers });
  const anonymous = await measure(service, `${base}/api/v1/auth/me`);

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
  console.log(pairingReport('GET /api/v1/auth/me (bearer)', 'raw Fastify + pg, same lookup', me, { throughput: 0.9 }).join('\n'));
  console.log(`\n${CPU_TABLE_HEAD}`);
  console.log(cpuTableRow('GET /api/v1/auth/me (no credential, 401)', anonymous));
  console.log(`\n${TABLE_HEAD}`);
  console.log(tableRow(`POST /api/v1/auth/login (${LOGIN_CONNECTIONS} connections)`, login));
  const meMedian = medianRun(me.app);
  console.log(`\nme p99 in its median round ${meMedian.p99.toFixed(1)} ms (target < 50)`);
  console.log(`401 path / authenticated: ${(anonymous.requestsPerSecond / meMedian.requestsPerSecond).toFixed(2)} (target ≥ 1)`);
  for (const [i, r] of loginRounds.entries()) console.log(`login round ${i + 1}: ${r.login.requestsPerSecond.toFixed(1)}/s vs raw argon2 verify ${r.verifyRate.toFixed(1)}/s just before: ${(r.ratio * 100).toFixed(0)}%`);
  console.log(`login ${login.requestsPerSecond.toFixed(1)}/s vs raw argon2 verify ${median.verifyRate.toFixed(1)}/s: ${(median.ratio * 100).toFixed(0)}% (median of ${LOGIN_ROUNDS} rounds; target ≥ 80%)`);
} finally {
  await raw?.stop();
  await service?.stop();
  await bench.close();
}
