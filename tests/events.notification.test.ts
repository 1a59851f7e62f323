// Publication notifications name the highest id published, and an instance that has read that far reads nothing more.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HubEvent } from '../src/events/hub.ts';
import { NOTIFY_CHANNEL, publishedIdOf } from '../src/events/listener.ts';
import { latestEventId, publishEvents } from '../src/events/store.ts';
import { recordMarkers, until } from './helpers/events.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { recordStatements } from './helpers/statements.ts';

let svc: TestService;
beforeAll(async () => {
  // Publication only when a test asks for it (no poll), so each test sees its own notification.
  svc = await startTestService({ eventTimings: { publishPollMs: 600_000 } });
});
afterAll(() => svc.close());
afterEach(() => vi.restoreAllMocks());

/** Counts the fan-out's outbox reads (`select … from "events" where "id" > …`) sent from now on. */
function countOutboxReads(): () => number {
  const sent = recordStatements();
  return () => sent().filter((s) => /from "events" where "id" >/.test(s.text)).length;
}

/** Runs `check` with the payloads of every notification on the events channel from now on (its own connection). */
async function withPayloads(check: (payloads: (string | undefined)[]) => Promise<void>): Promise<void> {
  const listener = new pg.Client({ connectionString: svc.db.url });
  await listener.connect();
  try {
    const payloads: (string | undefined)[] = [];
    listener.on('notification', (message) => payloads.push(message.payload));
    await listener.query(`LISTEN ${NOTIFY_CHANNEL}`);
    await check(payloads);
  } finally {
    await listener.end();
  }
}

describe('events_publish() notification', () => {
  it('carries the highest id the publication took', () =>
    withPayloads(async (payloads) => {
      // Markers recorded with publication off: the test's own call publishes all three at once.
      await svc.deps.events.publish();
      const before = await latestEventId(svc.deps.orm.em.fork());
      const runtimePublish = vi.spyOn(svc.deps.events, 'publish').mockResolvedValue(0);
      await recordMarkers(svc, 3);
      runtimePublish.mockRestore();
      expect(await publishEvents(svc.deps.orm.em.fork(), 1000)).toBe(3);
      await until(() => payloads.length > 0, 2000, 'the notification');
      const latest = await latestEventId(svc.deps.orm.em.fork());
      expect(latest).toBe(before + 3);
      expect(payloads).toEqual([String(latest)]);
    }));

  it('is not sent when there was nothing to publish', () =>
    withPayloads(async (payloads) => {
      await svc.deps.events.publish();
      expect(await publishEvents(svc.deps.orm.em.fork(), 1000)).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(payloads).toEqual([]);
    }));
});

describe('publishedIdOf (the listener reading a payload)', () => {
  it('reads a positive integer id', () => {
    expect(publishedIdOf('1')).toBe(1);
    expect(publishedIdOf('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('answers null for what names no id, so the instance reads the outbox anyway', () => {
    for (const payload of [undefined, '', '0', '-1', '01', '1.5', ' 1', '12abc', '99999999999999999']) expect(publishedIdOf(payload)).toBeNull();
  });
});

/** A stream's stand-in on the hub for the test's duration: what it was offered, in order. */
async function withSubscriber(run: (offered: number[]) => Promise<void>): Promise<void> {
  const { hub } = svc.deps.events;
  const offered: number[] = [];
  const subscriber = { offer: (event: HubEvent) => void offered.push(event.id) };
  hub.add(subscriber);
  try {
    await run(offered);
  } finally {
    hub.remove(subscriber);
  }
}

describe('the fan-out reading the outbox (EventHub.catchUp)', () => {
  it('reads nothing for a notification naming an id it has already read', () => withSubscriber(async () => {
    const { hub } = svc.deps.events;
    await recordMarkers(svc, 1);
    await svc.deps.events.publish();
    await until(async () => hub.position === (await latestEventId(svc.deps.orm.em.fork())), 2000, 'the hub to read the event');
    const reads = countOutboxReads();
    await hub.catchUp(hub.position);
    await hub.catchUp(hub.position - 1);
    expect(reads()).toBe(0);
  }));

  it('reads once for a notification naming an id beyond what it has read', () => withSubscriber(async () => {
    const { hub } = svc.deps.events;
    const reads = countOutboxReads();
    await hub.catchUp(hub.position + 1);
    expect(reads()).toBe(1);
  }));

  it('reads without an id (a reconnect, an old release), and after a read that was already under way', () => withSubscriber(async () => {
    const { hub } = svc.deps.events;
    const reads = countOutboxReads();
    // The second call may come after the first read began, so it must not be served by it.
    await Promise.all([hub.catchUp(), hub.catchUp()]);
    expect(reads()).toBe(2);
  }));

  it('reads nothing while no stream is open, and a stream opened later gets what commits after', async () => {
    const { hub } = svc.deps.events;
    const before = await latestEventId(svc.deps.orm.em.fork());
    const reads = countOutboxReads();
    await recordMarkers(svc, 2);
    await until(() => hub.position === before + 2, 2000, 'the notification to move the hub on');
    expect(reads()).toBe(0);
    await withSubscriber(async (offered) => {
      await recordMarkers(svc, 1);
      await until(() => offered.length > 0, 2000, 'the next event');
      expect(offered).toEqual([before + 3]);
    });
  });
});

describe('the instance that wrote an event', () => {
  it('reads it from the outbox once: the notification starts the read, the publication does not read again', () => withSubscriber(async (offered) => {
    const { hub } = svc.deps.events;
    const before = await latestEventId(svc.deps.orm.em.fork());
    const reads = countOutboxReads();
    const catchUp = vi.spyOn(hub, 'catchUp');
    await recordMarkers(svc, 1);
    await until(() => hub.position === before + 1, 2000, 'the hub to read the event');
    // Anything that would read it a second time (a read of its own after the publication) has happened by now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Only the notification asked, naming the id: nothing asked for "whatever is there", which always reads.
    expect(catchUp.mock.calls).toEqual([[before + 1]]);
    expect(reads()).toBe(1);
    expect(offered).toEqual([before + 1]);
  }));
});
