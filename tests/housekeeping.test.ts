// Housekeeping (CONTRACT §4.10): what the periodic purge deletes and keeps, one instance at a time, never throwing.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { revokeSession } from '../src/services/auth/sessions.ts';
import { insertRefreshToken, insertTicket } from '../src/services/auth/store.ts';
import { runHousekeeping, startHousekeeping, type HousekeepingDeps, type PurgeTask } from '../src/services/housekeeping/housekeeping.ts';
import { claimKey } from '../src/services/idempotency/store.ts';
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
    url: service.db.url,
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
    expect((await svc.housekeeping.runNow()).ran).toBe(true);
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

  it('counts what it deleted per task in the metrics', async () => {
    const user = await createUser(svc);
    await svc.deps.orm.em.fork().transactional((tx) => revokeSession({ em: tx, clock }, user.sessionId, 'revoked', { username: null }));
    const before = (await svc.deps.metrics.purgedRows.get()).values.find((v) => v.labels.task === 'sessions')?.value ?? 0;
    clock.ms += 8 * DAY;
    const result = await svc.housekeeping.runNow();
    expect(result.ran && result.purged.sessions).toBeGreaterThanOrEqual(1);
    const after = (await svc.deps.metrics.purgedRows.get()).values.find((v) => v.labels.task === 'sessions')?.value ?? 0;
    expect(after - before).toBe(result.ran ? result.purged.sessions : -1);
  });
});

describe('several instances', () => {
  it('runs on one instance at a time: another one skips while the first holds the lock', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered = () => {};
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const slow: PurgeTask = {
      name: 'slow',
      purge: async () => {
        entered();
        await gate;
        return 0;
      },
    };
    let calls = 0;
    const counting: PurgeTask = { name: 'counting', purge: () => Promise.resolve(void calls++).then(() => 0) };

    const first = runHousekeeping(depsOf(svc), [slow]);
    await inside;
    expect(await runHousekeeping(depsOf(other), [counting])).toEqual({ ran: false });
    expect(calls).toBe(0);
    release();
    expect((await first).ran).toBe(true);
    // The lock is free again once the first run is over.
    expect((await runHousekeeping(depsOf(other), [counting])).ran).toBe(true);
    expect(calls).toBe(1);
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
    expect(result).toEqual({ ran: true, purged: { after: 0 }, failed: ['broken'] });
    expect(ranAfter).toBe(true);
    expect(warnings).toEqual([expect.objectContaining({ task: 'broken' })]);
  });

  it('an unreachable database makes a run skip with a warning instead of throwing', async () => {
    warnings.length = 0;
    const result = await runHousekeeping({ ...depsOf(svc), url: 'postgresql://nobody:x@127.0.0.1:1/none' }, []);
    expect(result).toEqual({ ran: false });
    expect(warnings).toHaveLength(1);
  });
});

describe('the timer', () => {
  it('runs every interval in the background and stops on stop(), waiting for a run in progress', async () => {
    let runs = 0;
    const job = startHousekeeping(depsOf(svc), { intervalMs: 50, tasks: [{ name: 'tick', purge: () => Promise.resolve(void runs++).then(() => 0) }] });
    await expect.poll(() => runs, { timeout: 5000 }).toBeGreaterThanOrEqual(2);
    await job.stop();
    const stoppedAt = runs;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(runs).toBe(stoppedAt);
  });
});
