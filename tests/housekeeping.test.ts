// Housekeeping (CONTRACT §4.10): what the periodic purge deletes and keeps, never throwing, run by the job queue once per interval.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { revokeSession } from '../src/services/auth/sessions.ts';
import { insertRefreshToken, insertTicket } from '../src/services/auth/store.ts';
import { DEAD_STREAM_ROW_MS, housekeepingJob, runHousekeeping, type HousekeepingDeps, type PurgeTask } from '../src/services/housekeeping/housekeeping.ts';
import { claimKey } from '../src/services/idempotency/store.ts';
import { until } from './helpers/events.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';
import type { Clock } from '../src/contracts/clock.ts';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

// Stands still until a test moves it; each test starts it at real time (lucia dates new sessions by the real clock).
const clock = { ms: Date.now(), now: (): Date => new Date(clock.ms) } satisfies Clock & { ms: number };
beforeEach(() => {
  clock.ms = Date.now();
});

let svc: TestService;
let other: TestService;
beforeAll(async () => {
  svc = await startTestService({ clock, env: { RATE_LIMITS_ENABLED: 'false' } });
  // A second instance on the same database.
  other = await startTestService({ clock, databaseUrl: svc.databaseUrl, env: { RATE_LIMITS_ENABLED: 'false' } });
});
afterAll(() => Promise.all([svc.close(), other.close()]));

const warnings: unknown[] = [];
function depsOf(service: TestService): HousekeepingDeps {
  return {
    orm: service.deps.orm,
    clock,
    config: service.deps.config,
    logger: { info: () => {}, warn: (obj: unknown) => void warnings.push(obj) },
    metrics: service.deps.metrics,
  };
}

const db = () => kysely(svc.deps.orm.em.fork());
const hex = () => randomBytes(32).toString('hex');
const sessionRows = async (userId: string) => (await db().selectFrom('sessions').select('id').where('userId', '=', userId).execute()).length;
const refreshRows = async (sessionId: string) => (await db().selectFrom('refresh_tokens').select('tokenHash').where('sessionId', '=', sessionId).execute()).length;

describe('the periodic purge', () => {
  it('keeps a revoked session (still 1002) until both its tokens have expired, then purges it with its refresh tokens', async () => {
    const user = await createUser(svc);
    await svc.deps.orm.em.fork().transactional((tx) => revokeSession({ em: tx, clock }, user.sessionId, 'revoked', { username: null }));
    expect((await svc.housekeeping.runNow()).failed).toEqual([]);
    const me = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { ...user.headers, ...PROBLEM } });
    expect(me.json().error_code).toBe(1002);

    // Past the access token, inside the refresh window: the refresh token still answers 1002.
    clock.ms += HOUR + 1000;
    await svc.housekeeping.runNow();
    expect(await sessionRows(user.id)).toBe(1);
    await expect(svc.caller({ refreshToken: user.refreshToken }).auth.refresh()).rejects.toMatchObject({ errorCode: 1002 });

    clock.ms += 7 * DAY;
    await svc.housekeeping.runNow();
    expect(await sessionRows(user.id)).toBe(0);
    expect(await refreshRows(user.sessionId)).toBe(0);
  });

  it('keeps a live session while it can be refreshed, and purges it once its refresh window has ended too', async () => {
    const user = await createUser(svc);
    clock.ms += 2 * HOUR;
    await svc.housekeeping.runNow();
    expect(await sessionRows(user.id)).toBe(1);
    expect(await refreshRows(user.sessionId)).toBe(1);
    clock.ms += 7 * DAY;
    await svc.housekeeping.runNow();
    expect(await sessionRows(user.id)).toBe(0);
  });

  it('purges expired refresh tokens, keeps a used one until it expires (a replay is still recognised)', async () => {
    const user = await createUser(svc);
    const now = clock.now();
    const em = svc.deps.orm.em.fork();
    const expired = hex();
    const used = hex();
    await insertRefreshToken(em, { tokenHash: expired, sessionId: user.sessionId, createdAt: now, expiresAt: new Date(now.getTime() - 1000) });
    await insertRefreshToken(em, { tokenHash: used, sessionId: user.sessionId, createdAt: now, expiresAt: new Date(now.getTime() + DAY), usedAt: now });
    await svc.housekeeping.runNow();
    const left = await db().selectFrom('refresh_tokens').select('tokenHash').where('sessionId', '=', user.sessionId).execute();
    // The used one and the session's own current token stay; the expired one is gone.
    expect(left).toHaveLength(2);
    expect(left.map((r) => r.tokenHash)).toContain(used);
    expect(left.map((r) => r.tokenHash)).not.toContain(expired);
  });

  it('purges WebSocket tickets that were redeemed or expired, keeps pending ones', async () => {
    const user = await createUser(svc);
    const now = clock.now();
    const em = svc.deps.orm.em.fork();
    const ticket = (expiresAt: Date, redeemedAt: Date | null) => ({ ticketHash: hex(), userId: user.id, sessionId: user.sessionId, createdAt: now, expiresAt, redeemedAt });
    const pending = ticket(new Date(now.getTime() + 30_000), null);
    const redeemed = ticket(new Date(now.getTime() + 30_000), now);
    const expired = ticket(new Date(now.getTime() - 1), null);
    for (const t of [pending, redeemed, expired]) await insertTicket(em, t);
    await svc.housekeeping.runNow();
    const left = await db().selectFrom('ws_tickets').select('ticketHash').where('userId', '=', user.id).execute();
    expect(left.map((r) => r.ticketHash)).toEqual([pending.ticketHash]);
  });

  it('purges idempotency keys past their 24 h, keeps younger ones', async () => {
    const user = await createUser(svc);
    const em = svc.deps.orm.em.fork();
    const now = clock.now();
    const claim = (key: string, expiresAt: Date) => ({ userId: user.id, key, operation: 'users.create', fingerprint: hex(), now, leaseUntil: now, expiresAt });
    await claimKey(em, claim('old', new Date(now.getTime() - 1000)));
    await claimKey(em, claim('young', new Date(now.getTime() + DAY)));
    await svc.housekeeping.runNow();
    const left = await db().selectFrom('idempotency_keys').select('key').where('userId', '=', user.id).execute();
    expect(left.map((r) => r.key)).toEqual(['young']);
  });

  it('forgets open-stream registry rows unmarked for an hour (a dead instance\'s), keeps those marked since', async () => {
    const user = await createUser(svc);
    const now = clock.now();
    const row = (id: string, seenAt: Date) => ({ id, userId: user.id, sessionId: user.sessionId, apiKeyId: null, instanceId: randomUUID(), openedAt: seenAt, seenAt });
    const dead = randomUUID();
    const live = randomUUID();
    await db()
      .insertInto('event_streams')
      .values([row(dead, new Date(now.getTime() - DEAD_STREAM_ROW_MS - 1000)), row(live, new Date(now.getTime() - 5000))])
      .execute();
    await svc.housekeeping.runNow();
    const left = await db().selectFrom('event_streams').select('id').where('userId', '=', user.id).execute();
    expect(left.map((r) => r.id)).toEqual([live]);
  });

  it('counts what it deleted per task in the metrics', async () => {
    const user = await createUser(svc);
    await svc.deps.orm.em.fork().transactional((tx) => revokeSession({ em: tx, clock }, user.sessionId, 'revoked', { username: null }));
    const before = (await svc.deps.metrics.purgedRows.get()).values.find((v) => v.labels.task === 'sessions')?.value ?? 0;
    clock.ms += 8 * DAY;
    const result = await svc.housekeeping.runNow();
    expect(result.purged.sessions).toBeGreaterThanOrEqual(1);
    const after = (await svc.deps.metrics.purgedRows.get()).values.find((v) => v.labels.task === 'sessions')?.value ?? 0;
    expect(after - before).toBe(result.purged.sessions);
  });
});

describe('on the job queue', () => {
  async function jobs(state: string) {
    const client = new pg.Client({ connectionString: svc.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ start_after: Date; completed_on: Date | null }>(
        'SELECT start_after, completed_on FROM pgboss.job WHERE name = $1 AND state = $2 ORDER BY created_on',
        [housekeepingJob.name, state],
      );
      return rows;
    } finally {
      await client.end();
    }
  }

  it('with two instances on one database, one run is queued, PURGE_INTERVAL_S after the last run ended', async () => {
    // Both instances sent a first run at boot (the second one's runs right after the first, whose own
    // successor it displaced); the run that ended last queued the next one.
    // A run sends its successor before pg-boss marks it completed: wait for both.
    const settled = async () =>
      (await jobs('active')).length === 0 &&
      (await jobs('completed')).length > 0 &&
      (await jobs('created')).some((job) => job.start_after.getTime() > Date.now() + 60_000);
    await until(settled, 10_000, 'the runs at boot to end');
    const queued = await jobs('created');
    expect(queued).toHaveLength(1);
    const ends = (await jobs('completed')).map((job) => job.completed_on?.getTime() ?? 0);
    const gapS = ((queued[0]?.start_after.getTime() ?? 0) - Math.max(...ends)) / 1000;
    expect(gapS).toBeGreaterThan(svc.deps.config.purgeIntervalS - 5);
    expect(gapS).toBeLessThanOrEqual(svc.deps.config.purgeIntervalS + 1);
  });

  it('purges by itself: rows past retention in a database are gone once an instance with the queue has started', async () => {
    // Written by an instance that runs no jobs, then a fresh instance boots with them.
    const writer = await startTestService({ clock, jobTypes: [] });
    const user = await createUser(writer);
    const now = clock.now();
    const expired = { ticketHash: hex(), userId: user.id, sessionId: user.sessionId, createdAt: now, expiresAt: new Date(now.getTime() - 1000), redeemedAt: null };
    await insertTicket(writer.deps.orm.em.fork(), expired);
    await writer.close();
    const worker = await startTestService({ clock, databaseUrl: writer.databaseUrl });
    try {
      const left = async () => (await kysely(worker.deps.orm.em.fork()).selectFrom('ws_tickets').select('ticketHash').where('ticketHash', '=', expired.ticketHash).execute()).length;
      await until(async () => (await left()) === 0, 10_000, 'the queued run to purge the ticket');
    } finally {
      await worker.close();
    }
  });
});

describe('failures', () => {
  it('a failing task is logged, not thrown, and the tasks after it still run', async () => {
    warnings.length = 0;
    let ranAfter = false;
    const tasks: PurgeTask[] = [
      { name: 'broken', purge: () => Promise.reject(new Error('boom')) },
      { name: 'after', purge: () => Promise.resolve(void (ranAfter = true)).then(() => 0) },
    ];
    const result = await runHousekeeping(depsOf(svc), tasks);
    expect(result).toEqual({ purged: { after: 0 }, failed: ['broken'] });
    expect(ranAfter).toBe(true);
    expect(warnings).toEqual([expect.objectContaining({ task: 'broken' })]);
  });
});
