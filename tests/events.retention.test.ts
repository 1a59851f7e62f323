// Retention: events older than EVENT_RETENTION_S are purged by housekeeping (every PURGE_INTERVAL_S, on the job queue); a `since` before them is 409/4000.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { recordEvent } from '../src/events/record.ts';
import { PURGE_TASKS, runHousekeeping } from '../src/services/housekeeping/housekeeping.ts';
import { eventsAfter, latestEventId, purgedThrough } from '../src/events/store.ts';
import { listen, marker, TestSocket, until } from './helpers/events.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';
import type { Clock } from '../src/contracts/clock.ts';

const RETENTION_S = 60;
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };

let svc: TestService;
let base: string;
let user: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', EVENT_RETENTION_S: String(RETENTION_S) }, clock });
  base = await listen(svc);
  user = await createUser(svc);
});
afterAll(() => svc.close());
// Every test starts from an empty outbox: the clock moves past the retention of whatever earlier tests left.
beforeEach(async () => {
  offsetMs += (RETENTION_S + 5) * 1000;
  await purge();
});

const em = () => svc.deps.orm.em.fork();
/** The events task of a housekeeping run on `service`, at the test's clock. */
async function purge(service: TestService = svc): Promise<void> {
  const { failed } = await runHousekeeping({ ...service.deps, clock }, PURGE_TASKS.filter((task) => task.name === 'events'));
  expect(failed).toEqual([]);
}
/** Records and publishes an event that happened at `at`. */
async function recordAt(label: string, at: Date): Promise<void> {
  await em().transactional((tx) => recordEvent(tx, { type: 'user.deleted', actor: null, data: marker(label), at }));
  await svc.deps.events.publish();
}
const labels = async (after: number) => (await eventsAfter(em(), after, 10_000)).map((r) => r.data.id);

describe('the purge', () => {
  it(`deletes events older than EVENT_RETENTION_S (${String(RETENTION_S)} s here), keeps younger ones, and moves the retention mark`, async () => {
    const start = await latestEventId(em());
    const now = clock.now().getTime();
    await recordAt('old-1', new Date(now - (RETENTION_S + 10) * 1000));
    await recordAt('old-2', new Date(now - (RETENTION_S + 5) * 1000));
    const oldLast = await latestEventId(em());
    await recordAt('young', new Date(now - (RETENTION_S - 10) * 1000));
    await purge();
    expect(await labels(start)).toEqual(['young']);
    expect(await purgedThrough(em())).toBeGreaterThanOrEqual(oldLast);
  });

  it('never deletes past a younger event: an old change committed after younger ones waits for them', async () => {
    const start = await latestEventId(em());
    const now = clock.now().getTime();
    await recordAt('young-first', new Date(now - 1000));
    await recordAt('old-but-later', new Date(now - (RETENTION_S + 100) * 1000));
    await purge();
    expect(await labels(start)).toEqual(['young-first', 'old-but-later']);
  });

  it('purges of several instances at once agree', async () => {
    const other = await startTestService({ databaseUrl: svc.databaseUrl, env: { EVENT_RETENTION_S: String(RETENTION_S) }, clock });
    try {
      const now = clock.now().getTime();
      for (let i = 0; i < 5; i++) await recordAt(`stale-${String(i)}`, new Date(now - (RETENTION_S + 1) * 1000));
      const last = await latestEventId(em());
      offsetMs += 2000;
      await Promise.all([purge(svc), purge(other), purge(svc)]);
      expect(await labels(0)).toEqual([]);
      expect(await purgedThrough(em())).toBe(last);
    } finally {
      await other.close();
    }
  });

  it('runs by itself, off the request path: an instance with the job queue purges them on its own', async () => {
    // Written by an instance that works no jobs, on a database of its own; an instance with the queue then
    // boots on it, and the housekeeping run it queues at once purges the event.
    const writer = await startTestService({ env: { EVENT_RETENTION_S: String(RETENTION_S) }, clock, jobTypes: [] });
    await writer.deps.orm.em.fork().transactional((tx) =>
      recordEvent(tx, { type: 'user.deleted', actor: null, data: marker('expires-on-its-own'), at: new Date(clock.now().getTime() - (RETENTION_S + 1) * 1000) }),
    );
    await writer.deps.events.publish();
    await writer.close();
    const worker = await startTestService({ databaseUrl: writer.databaseUrl, env: { EVENT_RETENTION_S: String(RETENTION_S) }, clock });
    try {
      await until(async () => (await eventsAfter(worker.deps.orm.em.fork(), 0, 10)).length === 0, 10_000, 'the queued housekeeping run');
      expect(await purgedThrough(worker.deps.orm.em.fork())).toBeGreaterThan(0);
    } finally {
      await worker.close();
    }
  });
});

describe('a since older than the retention window', () => {
  it('is refused with 409/4000 "events before <id> are no longer retained"; since at the mark replays what is left', async () => {
    const now = clock.now().getTime();
    const before = String(await latestEventId(em()));
    await recordAt('gone', new Date(now - (RETENTION_S + 1) * 1000));
    const mark = await latestEventId(em());
    const kept = ['kept-0', 'kept-1'];
    for (const label of kept) await recordAt(label, clock.now());
    await purge();
    expect(await purgedThrough(em())).toBe(mark);

    const socket = await TestSocket.open(base, user);
    const refused = await socket.request({ type: 'subscribe', channels: ['users'], since: before });
    expect(refused).toMatchObject({ type: 'error', error: { status: 409, error_code: 4000, detail: `events before ${String(mark + 1)} are no longer retained` } });
    // Refused as a whole: nothing was subscribed.
    expect(await socket.request({ type: 'unsubscribe', channels: ['approvals'] })).toEqual({ type: 'subscribed', channels: [] });
    expect(await socket.request({ type: 'subscribe', channels: ['users'], since: String(mark) })).toEqual({ type: 'subscribed', channels: ['users'] });
    expect((await socket.events(2)).map((e) => e.data.id)).toEqual(kept);
    socket.close();
  });
});
