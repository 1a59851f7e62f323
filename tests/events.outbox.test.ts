// The transactional outbox: an event exists iff its transaction commits; ids are given at publication, never before the commit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent } from '../src/events/record.ts';
import { eventsAfter, latestEventId, publishEvents } from '../src/events/store.ts';
import { kysely } from '../src/db/kysely.ts';
import { approvalData, marker, sleep, until } from './helpers/events.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { statementsDuring } from './helpers/statements.ts';

let svc: TestService;
beforeAll(async () => {
  // No polling publication here: what gets published, the recording instance publishes after the commit.
  svc = await startTestService({ eventTimings: { publishPollMs: 600_000 } });
});
afterAll(() => svc.close());

const fresh = () => svc.deps.orm.em.fork();
const record = (tx: EntityManager, label: string) => recordEvent(tx, { type: 'user.deleted', actor: 'tester', data: marker(label) });
/** Published events after `id`, once everything committed so far has been published. */
async function rowsAfter(id: number) {
  await svc.deps.events.publish();
  return eventsAfter(fresh(), id, 10_000);
}
/** The last published id once everything committed before (an earlier test's event included) has been published. */
async function publishedSoFar() {
  await svc.deps.events.publish();
  return latestEventId(fresh());
}
const labelOf = (row: { data: Record<string, unknown> }) => row.data.id;

describe('recordEvent', () => {
  it('writes the event with the transaction of the change: committed → exactly one event, with its channel and payload', async () => {
    const before = await publishedSoFar();
    const data = approvalData();
    await fresh().transactional((tx) => recordEvent(tx, { type: 'approval.created', actor: 'alice', data, at: new Date('2026-11-23T10:00:00.123Z') }));
    const rows = await rowsAfter(before);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: 'approval.created', channel: 'approvals', actor: 'alice', audienceUserId: null, data, occurredAt: new Date('2026-11-23T10:00:00.123Z') });
    expect(rows[0]?.id).toBeGreaterThan(before);
  });

  it('costs the transaction of the change one statement: the event, its audit entry and the webhooks it goes to are written and read together', async () => {
    const data = approvalData();
    const sent = await statementsDuring(() =>
      fresh().transactional((tx) => recordEvent(tx, { type: 'approval.created', actor: 'alice', data, at: new Date('2026-11-23T10:00:00.456Z') })),
    );
    const inTransaction = sent.map((s) => s.text).filter((text) => text !== 'begin' && text !== 'commit' && !/events_publish/.test(text));
    expect(inTransaction).toHaveLength(1);
    expect(inTransaction[0]).toMatch(/insert into "events".*insert into "audit_entries".*from "webhooks"/s);
    const entry = await kysely(fresh()).selectFrom('audit_entries').select(['type', 'actor', 'data']).where('occurredAt', '=', new Date('2026-11-23T10:00:00.456Z')).executeTakeFirst();
    expect(entry).toEqual({ type: 'approval.created', actor: 'alice', data });
  });

  it('a rolled-back transaction leaves no event (and its id is never seen)', async () => {
    const before = await publishedSoFar();
    await expect(
      fresh().transactional(async (tx) => {
        await record(tx, 'rolled-back');
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await fresh().transactional((tx) => record(tx, 'after-rollback'));
    expect((await rowsAfter(before)).map(labelOf)).toEqual(['after-rollback']);
  });

  it('the recording instance publishes the event right after the commit, without being asked', async () => {
    const before = await publishedSoFar();
    await fresh().transactional((tx) => record(tx, 'published-by-itself'));
    await until(async () => (await eventsAfter(fresh(), before, 10)).length === 1, 2000, 'the event to be published');
  });

  it('an event recorded in a nested transaction (savepoint) is published when the outer transaction commits', async () => {
    const before = await publishedSoFar();
    await fresh().transactional(async (outer) => {
      await outer.transactional((inner) => record(inner, 'nested'));
      await sleep(100);
      expect(await eventsAfter(fresh(), before, 10)).toEqual([]);
    });
    await until(async () => (await eventsAfter(fresh(), before, 10)).map(labelOf).includes('nested'), 2000, 'the nested event to be published');
  });

  it('another transaction committing between the savepoint and its outer commit neither publishes it early nor takes its publication', async () => {
    const before = await publishedSoFar();
    await fresh().transactional(async (outer) => {
      await outer.transactional(async (inner) => {
        // Two levels deep: the event waits for the outermost commit.
        await inner.transactional((innermost) => record(innermost, 'nested-twice'));
      });
      // A transaction of its own, with no event, commits meanwhile.
      await fresh().transactional((other) => kysely(other).selectNoFrom((eb) => eb.val(1).as('one')).execute());
      await sleep(100);
      expect(await eventsAfter(fresh(), before, 10)).toEqual([]);
    });
    await until(async () => (await eventsAfter(fresh(), before, 10)).map(labelOf).includes('nested-twice'), 2000, 'the nested event to be published');
  });

  it('an event committed by another program (no publication of its own) is published by the instances\' poll', async () => {
    const polling = await startTestService({ databaseUrl: svc.databaseUrl, eventTimings: { publishPollMs: 100 } });
    try {
      const before = await publishedSoFar();
      await fresh().transactional((tx) =>
        kysely(tx).insertInto('events').values({ type: 'user.deleted', channel: 'users', occurredAt: new Date(), actor: null, audienceUserId: null, data: marker('from-elsewhere') }).execute(),
      );
      await until(async () => (await eventsAfter(fresh(), before, 10)).map(labelOf).includes('from-elsewhere'), 2000, 'the poll to publish it');
    } finally {
      await polling.close();
    }
  });

  it('refuses to write outside a transaction (the event could outlive a failed change)', async () => {
    await expect(record(fresh(), 'no-transaction')).rejects.toThrow(/inside the transaction/);
  });

  it('checks the payload against the event type\'s schema; a bad payload fails the whole transaction', async () => {
    const before = await publishedSoFar();
    const { status: _status, ...withoutStatus } = approvalData();
    await expect(
      fresh().transactional((tx) =>
        // @ts-expect-error -- the compiler already refuses a payload without `status`
        recordEvent(tx, { type: 'approval.approved', actor: 'bob', data: withoutStatus }),
      ),
    ).rejects.toThrow();
    expect(await rowsAfter(before)).toEqual([]);
  });

  it('keeps exactly the fields the endpoint returns (unknown ones are dropped)', async () => {
    const before = await publishedSoFar();
    const data = { ...marker('extra'), password_hash: 'secret' };
    await fresh().transactional((tx) => recordEvent(tx, { type: 'user.deleted', actor: null, data }));
    expect((await rowsAfter(before))[0]?.data).toEqual(marker('extra'));
  });

  it('session.revoked names its audience, the one user who receives it', async () => {
    const before = await publishedSoFar();
    const userId = '00000000-0000-4000-8000-000000000001';
    await fresh().transactional((tx) =>
      recordEvent(tx, { type: 'session.revoked', actor: null, audience: userId, data: { session_id: 's1', reason: 'logout' } }),
    );
    expect((await rowsAfter(before))[0]).toMatchObject({ channel: 'sessions', audienceUserId: userId });
    await expect(
      fresh().transactional((tx) =>
        // @ts-expect-error -- the compiler already requires the audience
        recordEvent(tx, { type: 'session.revoked', actor: null, data: { session_id: 's1', reason: 'logout' } }),
      ),
    ).rejects.toThrow(/audience/);
  });
});

describe('ids follow the order in which events become visible, never skipping a late commit', () => {
  it('a transaction that records first but commits last gets the larger id', async () => {
    const before = await publishedSoFar();
    let releaseFirst!: () => void;
    const firstMayCommit = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstRecorded!: () => void;
    const recorded = new Promise<void>((resolve) => (firstRecorded = resolve));
    const first = fresh().transactional(async (tx) => {
      await record(tx, 'inserted-first');
      firstRecorded();
      await firstMayCommit;
    });
    await recorded;
    await fresh().transactional((tx) => record(tx, 'inserted-second'));
    // Committed so far: only the second. A reader that saw it must still see the first later.
    const seen = await rowsAfter(before);
    expect(seen.map(labelOf)).toEqual(['inserted-second']);
    releaseFirst();
    await first;
    const after = await rowsAfter(seen[0]?.id ?? 0);
    expect(after.map(labelOf)).toEqual(['inserted-first']);
  });

  it('a reader polling "events after the last id I saw" while transactions commit out of order sees every committed event once, in order, and no rolled-back one', async () => {
    const start = await publishedSoFar();
    const writers = 16;
    const perWriter = 3;
    let writing = true;
    const seen: { id: number; label: unknown }[] = [];
    const reader = (async () => {
      let last = start;
      while (writing) {
        for (const row of await rowsAfter(last)) {
          expect(row.id).toBeGreaterThan(last);
          last = row.id;
          seen.push({ id: row.id, label: labelOf(row) });
        }
        await sleep(2);
      }
      for (const row of await rowsAfter(last)) seen.push({ id: row.id, label: labelOf(row) });
    })();

    const committed: string[] = [];
    // Each writer inserts at once, then holds its transaction open for a random time before committing,
    // so insert order and commit order disagree; every fourth one rolls back.
    const results = await Promise.allSettled(
      Array.from({ length: writers }, (_, w) =>
        fresh().transactional(async (tx) => {
          for (let i = 0; i < perWriter; i++) await record(tx, `w${String(w)}-${String(i)}`);
          await sleep(Math.random() * 60);
          if (w % 4 === 3) throw new Error('rolled back');
        }),
      ),
    );
    results.forEach((r, w) => {
      if (r.status === 'fulfilled') for (let i = 0; i < perWriter; i++) committed.push(`w${String(w)}-${String(i)}`);
    });
    writing = false;
    await reader;

    expect(seen.map((s) => s.label).sort()).toEqual([...committed].sort());
    expect(seen.map((s) => s.id)).toEqual([...seen.map((s) => s.id)].sort((a, b) => a - b));
    expect(new Set(seen.map((s) => s.id)).size).toBe(seen.length);
    // A transaction's own events stay together and in the order it recorded them.
    for (let w = 0; w < writers; w++) {
      const mine = seen.filter((s) => String(s.label).startsWith(`w${String(w)}-`)).map((s) => s.label);
      if (mine.length > 0) expect(mine).toEqual([0, 1, 2].map((i) => `w${String(w)}-${String(i)}`));
    }
  });

  it('publications racing on several instances never renumber, reorder or skip an event', async () => {
    const start = await publishedSoFar();
    let writing = true;
    const committed: string[] = [];
    const writers = Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 15; i++) {
          const label = `race-${String(w)}-${String(i)}`;
          await fresh().transactional((tx) => record(tx, label));
          committed.push(label);
        }
      }),
    ).finally(() => (writing = false));
    // Small batches from four "instances" at once, on top of the service's own publications.
    const publishers = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (writing) await publishEvents(fresh(), 3);
      }),
    );
    const seen: { id: number; label: unknown }[] = [];
    let last = start;
    while (writing || seen.length < committed.length) {
      for (const row of await eventsAfter(fresh(), last, 10_000)) {
        expect(row.id).toBeGreaterThan(last);
        last = row.id;
        seen.push({ id: row.id, label: labelOf(row) });
      }
      if (!writing) await svc.deps.events.publish();
      await sleep(1);
    }
    await writers;
    await publishers;
    expect(seen.map((s) => s.label).sort()).toEqual([...committed].sort());
    // Ids seen once are never given to anything else later.
    const final = new Map((await eventsAfter(fresh(), start, 10_000)).map((r) => [r.id, labelOf(r)]));
    for (const s of seen) expect(final.get(s.id)).toBe(s.label);
  });
});
