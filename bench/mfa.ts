// Login with a TOTP code against login with the password alone (CONTRACT §3.6, issue 28's target): two pools of
// users with one password, one with TOTP on, signed in by a closed loop of requests in alternating rounds on one
// service in a process of its own, CPU per request beside req/s and the latencies; and the SQL round trips
// each kind of login makes, counted on the wire on a second run of the service.
// Run by hand: npm run bench:mfa  (BENCH_DURATION, BENCH_ROUNDS, BENCH_CPU_PROF as for the others; BENCH_MFA_USERS
// users per side, 4,000 by default).
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { generateHOTP } from '@oslojs/otp';
import { systemClock } from '../src/contracts/clock.ts';
import { TOTP_DIGITS } from '../src/contracts/mfa.ts';
import { createAccount } from '../src/services/auth/accounts.ts';
import { hashPassword } from '../src/services/auth/passwords.ts';
import { usernameKey, usernameSkeletonKey } from '../src/services/auth/usernameKeys.ts';
import { seal } from '../src/services/mfa/secretBox.ts';
import { putTotp } from '../src/services/mfa/store.ts';
import { newTotpKey, stepAt } from '../src/services/mfa/totp.ts';
import { loadSecret } from '../src/services/settings/store.ts';
import { insertUser, setMfaEnabled } from '../src/services/users/store.ts';
import { closedLoop, type ClosedLoopResult } from './closedLoop.ts';
import { DURATION_S, machine, PAIR_ROUNDS, pairingReport, startBenchDatabase, startServiceProcess, type Pairing, type ServerProcess } from './lib.ts';
import { countRoundTrips } from './pgRoundTrips.ts';

const PASSWORD = 'quiet lantern orbit 7319';
const TARGET = 0.95;
// As bench/auth.ts's login: argon2 is the bottleneck, and more connections only queue behind it.
const LOGIN_CONNECTIONS = 4;
const WARM_UP_S = 3;
/**
 * A TOTP code is accepted once per user and 30-s step, so a user signs in again only once the whole pool
 * has (see cycle()): the pool must outlast a step at the login rate, with room for a faster machine.
 */
const POOL = Number(process.env.BENCH_MFA_USERS ?? 4000);
/** Sequential logins per side on the wire-counted run, after a few to warm it up. */
const COUNTED_LOGINS = 100;
const COUNT_WARM_UP = 10;
const IDLE_S = 5;
const LOGIN_PATH = '/api/v1/auth/login';
// The service's other connections, named in src/jobs/queue.ts and src/events/listener.ts: pg-boss's polling and
// the event listener's probes are not a login's doing.
const BACKGROUND_CONNECTIONS = ['agent-org-jobs', 'agent-org-events'];

type BenchUser = { username: string; key: Uint8Array | null };

/**
 * `count` users named `<prefix>_<n>`, inserted as the service's store inserts them, all with the one hash
 * (hashing each would take minutes); with `totp`, each with a key sealed and stored as a confirmed
 * enrollment leaves it, no step used yet.
 */
async function seedUsers(tx: EntityManager, deps: { secret: Buffer; passwordHash: string }, prefix: string, count: number, totp: boolean): Promise<BenchUser[]> {
  const now = systemClock.now();
  const seeded: BenchUser[] = [];
  for (let n = 0; n < count; n++) {
    const username = `${prefix}_${n}`;
    const user = await insertUser(tx, {
      id: randomUUID(),
      username,
      usernameKey: usernameKey(username),
      usernameSkeleton: usernameSkeletonKey(username),
      passwordHash: deps.passwordHash,
      role: 'observer',
      kind: 'human',
      mustChangePassword: false,
      temporaryPasswordSetAt: null,
      createdAt: now,
      updatedAt: now,
    });
    let key: Uint8Array | null = null;
    if (totp) {
      key = newTotpKey();
      await putTotp(tx, user.id, seal(deps.secret, key, user.id), now);
      if (!(await setMfaEnabled(tx, user.id, true, now))) throw new Error(`two-factor authentication did not turn on for ${username}`);
    }
    seeded.push({ username, key });
  }
  return seeded;
}

/** The login body of a user: with a key, the code of the current step as the authenticator app shows it. */
function loginBody(user: BenchUser, step: number): string {
  const otp = user.key ? { otp: generateHOTP(user.key, BigInt(step), TOTP_DIGITS) } : {};
  return JSON.stringify({ username: user.username, password: PASSWORD, ...otp });
}

/**
 * The next login body, round the pool. A user with a key comes round again only in a later step than its
 * last code's, or the service would rightly refuse the replay; a pool that comes round sooner ends the run.
 */
function cycle(users: readonly BenchUser[]): () => string {
  const lastStep = new Map<number, number>();
  let next = 0;
  return () => {
    const index = next++ % users.length;
    const user = users[index]!;
    const step = stepAt(systemClock.now());
    if (user.key && (lastStep.get(index) ?? -1) >= step) {
      throw new Error(`all ${users.length} users with TOTP signed in within one 30-s step: raise BENCH_MFA_USERS`);
    }
    lastStep.set(index, step);
    return loginBody(user, step);
  };
}

/** One login over HTTP, which must get `status`. */
async function signIn(base: string, body: string, status = 200): Promise<string> {
  const res = await fetch(`${base}${LOGIN_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await res.text();
  if (res.status !== status) throw new Error(`POST ${LOGIN_PATH} answered ${res.status} (expected ${status}): ${text}`);
  return text;
}

const bench = await startBenchDatabase('mfa');
let service: ServerProcess | undefined;
try {
  const em = bench.db.orm.em.fork();
  // The secret the service will seal and open with: APP_SECRET, which startServiceProcess gives it too.
  const secret = await loadSecret(em, bench.config.appSecret);
  const passwordHash = await hashPassword(PASSWORD);
  // First-run setup done: login refuses to run before a CEO exists.
  await em.transactional((tx) => createAccount({ em: tx, clock: systemClock }, { username: 'ceo', password: PASSWORD, role: 'ceo', mustChangePassword: false }));
  const seedStarted = performance.now();
  const deps = { secret, passwordHash };
  const pools = await em.transactional(async (tx) => ({
    totp: await seedUsers(tx, deps, 'totp', POOL, true),
    plain: await seedUsers(tx, deps, 'plain', POOL, false),
    countTotp: await seedUsers(tx, deps, 'count_totp', COUNT_WARM_UP + COUNTED_LOGINS + 1, true),
    countPlain: await seedUsers(tx, deps, 'count_plain', COUNT_WARM_UP + COUNTED_LOGINS, false),
  }));
  const seedS = (performance.now() - seedStarted) / 1000;

  // Rate limits off: thousands of logins a minute from one address is the point here. The login throttle
  // stays on (it has no switch) and counts only failures, which should be none. No role is made to enroll,
  // whatever the environment says.
  const serviceEnv = { RATE_LIMITS_ENABLED: 'false', MFA_REQUIRED_ROLES: '' };

  // Round trips first, on a service whose database connections go through a counting relay; sequential
  // logins, so the count is the login's alone. Latency through the relay does not matter here, so the
  // measured service below connects directly.
  const counter = await countRoundTrips(bench.db.url, { ignore: BACKGROUND_CONNECTIONS });
  const trips = { totp: NaN, plain: NaN, idle: NaN };
  try {
    const counted = await startServiceProcess(bench, { ...serviceEnv, DATABASE_URL: counter.url });
    try {
      const step = () => stepAt(systemClock.now());
      // TOTP really is on for these users: without a code, the password alone is not enough.
      const [probe, ...countTotp] = pools.countTotp;
      const refused = await signIn(counted.url, JSON.stringify({ username: probe!.username, password: PASSWORD }), 401);
      if (!refused.includes('one-time code required')) throw new Error(`a login without a code was refused otherwise: ${refused}`);
      for (const user of [...countTotp.slice(0, COUNT_WARM_UP), ...pools.countPlain.slice(0, COUNT_WARM_UP)]) await signIn(counted.url, loginBody(user, step()));
      // The service's own timers (the event publication poll, the stream sweeps) use the same connections
      // whether or not anyone signs in: their rate while idle is taken off each side's count.
      const idleBefore = counter.roundTrips();
      await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000));
      trips.idle = (counter.roundTrips() - idleBefore) / IDLE_S;
      const countLogins = async (users: readonly BenchUser[]) => {
        const before = counter.roundTrips();
        const started = performance.now();
        for (const user of users) await signIn(counted.url, loginBody(user, step()));
        const background = (trips.idle * (performance.now() - started)) / 1000;
        return (counter.roundTrips() - before - background) / users.length;
      };
      trips.totp = await countLogins(countTotp.slice(COUNT_WARM_UP));
      trips.plain = await countLogins(pools.countPlain.slice(COUNT_WARM_UP));
    } finally {
      await counted.stop();
    }
  } finally {
    await counter.close();
  }

  service = await startServiceProcess(bench, serviceEnv);
  const withTotp = cycle(pools.totp);
  const without = cycle(pools.plain);
  const runs: { name: string; result: ClosedLoopResult }[] = [];
  const run = async (name: string, next: () => string, durationS: number) => {
    const result = await closedLoop(service!, LOGIN_PATH, next, { connections: LOGIN_CONNECTIONS, durationS });
    runs.push({ name, result });
    return result;
  };
  // Rounds alternate after a warm-up of each, as lib.ts's alternateRounds does for autocannon, so the shared
  // machine's other tenants weigh on both sides alike; which side goes first alternates too, so a drift over
  // the run (the sessions table growing, the heap) does not always favour the same side.
  await run('warm-up with TOTP', withTotp, WARM_UP_S);
  await run('warm-up without', without, WARM_UP_S);
  const pairing: Pairing = { app: [], ceiling: [] };
  for (let round = 1; round <= PAIR_ROUNDS; round++) {
    const totpRound = () => run(`round ${round} with TOTP`, withTotp, DURATION_S);
    const plainRound = () => run(`round ${round} without`, without, DURATION_S);
    if (round % 2 === 1) {
      pairing.app.push(await totpRound());
      pairing.ceiling.push(await plainRound());
    } else {
      pairing.ceiling.push(await plainRound());
      pairing.app.push(await totpRound());
    }
  }

  console.log(`# Login with TOTP against login without\n${machine()}`);
  console.log(
    `${LOGIN_CONNECTIONS} connections (a closed loop, each login a user of its own side's pool of ${POOL.toLocaleString('en-US')}, ` +
      `one password), ${PAIR_ROUNDS} alternating rounds of ${DURATION_S} s per side (the first side alternating too) after a ${WARM_UP_S} s warm-up of each; ` +
      `RATE_LIMITS_ENABLED=false; ${(2 * POOL).toLocaleString('en-US')} users seeded in ${seedS.toFixed(1)} s\n`,
  );
  console.log(pairingReport(`POST ${LOGIN_PATH} with TOTP`, 'without', pairing, { throughput: TARGET }).join('\n'));
  const failed = runs.filter((r) => r.result.non2xx + r.result.errors > 0);
  console.log(`\nNon-2xx answers and connection errors (warm-ups included): ${failed.length === 0 ? 'none' : ''}`);
  for (const { name, result } of failed) {
    const answers = [...result.failures].map(([what, n]) => `${n} × ${what}`);
    console.log(`- ${name}: ${[...answers, ...(result.errors > 0 ? [`${result.errors} connection errors`] : [])].join('; ')}`);
  }
  console.log(
    `\nSQL round trips per login (Sync and Query messages on the service's request connections, ${COUNTED_LOGINS} sequential ` +
      `logins per side, less the ${trips.idle.toFixed(1)}/s the service makes while idle, over ${IDLE_S} s before them):`,
  );
  console.log(`- with TOTP: ${trips.totp.toFixed(2)}`);
  console.log(`- without: ${trips.plain.toFixed(2)}`);
  console.log(`- the code's own: ${(trips.totp - trips.plain).toFixed(2)} (target ≤ 1, the UPDATE that marks the step used)`);
  if (failed.length > 0) process.exitCode = 1;
} finally {
  await service?.stop();
  await bench.close();
}
