// Two instances on one database: fan-out through LISTEN/NOTIFY, tickets, revocation, the stream cap, listener reconnection.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { recordEvent } from '../src/events/record.ts';
import { latestEventId } from '../src/events/store.ts';
import { revokeSession } from '../src/services/auth/sessions.ts';
import { listen, marker, recordMarkers, refusedUpgrade, sleep, TestSocket, ticketFor, until } from './helpers/events.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const MAX_STREAMS = 2;
const env = { RATE_LIMITS_ENABLED: 'false', EVENTS_MAX_STREAMS_PER_USER: String(MAX_STREAMS) };

let a: TestService;
let b: TestService;
let baseA: string;
let baseB: string;
let user: TestUser;
beforeAll(async () => {
  a = await startTestService({ env });
  b = await startTestService({ env, databaseUrl: a.databaseUrl });
  [baseA, baseB] = [await listen(a), await listen(b)];
});
// A user per test: the stream cap is per user, and a socket a previous test closed may still be counted.
beforeEach(async () => {
  user = await createUser(a);
});
afterAll(async () => {
  await b.close();
  await a.close();
});

async function subscribed(base: string, who: TestUser | { ticket: string }, channels: string[], since?: string): Promise<TestSocket> {
  const socket = await TestSocket.open(base, who);
  expect((await socket.request({ type: 'subscribe', channels, ...(since === undefined ? {} : { since }) })).type).toBe('subscribed');
  return socket;
}

describe('fan-out across instances (LISTEN/NOTIFY)', () => {
  it('an event committed through A reaches a socket on B within 1 s', async () => {
    const socket = await subscribed(baseB, user, ['users']);
    for (let i = 0; i < 5; i++) {
      const label = `a-to-b-${String(i)}`;
      const started = performance.now();
      await a.deps.orm.em.fork().transactional((tx) => recordEvent(tx, { type: 'user.deleted', actor: 'a', data: marker(label) }));
      const [event] = await socket.events(1, 1000);
      expect(event?.data.id).toBe(label);
      expect(performance.now() - started).toBeLessThan(1000);
    }
    socket.close();
  });

  it('both instances give the same events the same ids', async () => {
    const onA = await subscribed(baseA, user, ['users']);
    const onB = await subscribed(baseB, user, ['users']);
    await recordMarkers(b, 3);
    expect(await onA.events(3)).toEqual(await onB.events(3));
    onA.close();
    onB.close();
  });
});

describe('tickets across instances', () => {
  it('a ticket issued through A works once, on whichever instance redeems it first', async () => {
    const ticket = await ticketFor(user);
    const socket = await TestSocket.open(baseB, { ticket });
    expect(await refusedUpgrade(`${baseA}/api/v1/ws?ticket=${ticket}`, PROBLEM)).toMatchObject({ status: 401, body: { error_code: 1000 } });
    expect(await refusedUpgrade(`${baseB}/api/v1/ws?ticket=${ticket}`, PROBLEM)).toMatchObject({ status: 401, body: { error_code: 1000 } });
    socket.close();
  });

  it('concurrent upgrades with one ticket on both instances: exactly one succeeds', async () => {
    const ticket = await ticketFor(user);
    const attempts = await Promise.allSettled([baseA, baseB, baseA, baseB].map((base) => TestSocket.open(base, { ticket })));
    const opened = attempts.filter((r) => r.status === 'fulfilled');
    expect(opened).toHaveLength(1);
    for (const r of opened) r.value.close();
  });
});

describe('revocation across instances', () => {
  it('revoking a session on A closes its socket on B with 4001 within 2 s, after the session.revoked event', async () => {
    const victim = await createUser(a);
    const socket = await subscribed(baseB, victim, ['approvals']);
    const started = Date.now();
    await a.deps.orm.em.fork().transactional((tx) => revokeSession({ em: tx, clock: a.deps.clock }, victim.sessionId, 'revoked', { username: null }));
    expect((await socket.events(1, 2000))[0]).toMatchObject({ type: 'session.revoked', data: { session_id: victim.sessionId } });
    expect((await socket.closed).code).toBe(4001);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a logout through A closes the socket on B with 4001 within 2 s, after its session.revoked event', async () => {
    const victim = await createUser(a);
    const socket = await subscribed(baseB, victim, ['users']);
    const started = Date.now();
    expect((await a.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: victim.headers })).statusCode).toBe(204);
    expect((await socket.events(1, 2000))[0]).toMatchObject({ type: 'session.revoked', data: { session_id: victim.sessionId, reason: 'logout' } });
    expect((await socket.closed).code).toBe(4001);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('the stream cap counts every instance', () => {
  it(`with ${String(MAX_STREAMS)} streams open on A and B, the next upgrade on either is 429/5002`, async () => {
    const capped = await createUser(a);
    const open = [await TestSocket.open(baseA, capped), await TestSocket.open(baseB, capped)];
    for (const base of [baseA, baseB]) {
      expect(await refusedUpgrade(`${base}/api/v1/ws?ticket=${await ticketFor(capped)}`, PROBLEM)).toMatchObject({ status: 429, body: { error_code: 5002 } });
    }
    open[1]?.close();
    await open[1]?.closed;
    // A refused upgrade leaves its ticket unused, so one ticket serves every retry (new ones per attempt would
    // run into the 5 pending tickets per user while B is still giving the slot back).
    const ticket = await ticketFor(capped);
    await until(async () => {
      try {
        (await TestSocket.open(baseA, { ticket })).close();
        return true;
      } catch {
        return false;
      }
    }, 3000, 'a slot to free up');
    open[0]?.close();
  });

  it('streams of an instance that stopped are released', async () => {
    const c = await startTestService({ env, databaseUrl: a.databaseUrl });
    const baseC = await listen(c);
    const leaving = await createUser(a);
    const socket = await TestSocket.open(baseC, leaving);
    await TestSocket.open(baseC, leaving);
    await c.close();
    await socket.closed;
    (await TestSocket.open(baseA, leaving)).close();
  });
});

describe('the listener connection', () => {
  it('after its connection is cut, B reconnects and delivers what was committed meanwhile, in order, then live events', async () => {
    const socket = await subscribed(baseB, user, ['users']);
    const pid = b.deps.events.listenerPid;
    expect(pid).not.toBeNull();
    const admin = new pg.Client({ connectionString: a.databaseUrl });
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
    // Committed while B has no listening connection: no notification reaches it.
    const during = await recordMarkers(a, 3, 'during-gap');
    await until(() => b.deps.events.listenerPid !== null && b.deps.events.listenerPid !== pid, 10_000, 'the listener to reconnect');
    expect((await socket.events(3, 5000)).map((e) => e.data.id)).toEqual(during);
    const after = await recordMarkers(a, 2, 'after-gap');
    expect((await socket.events(2, 1000)).map((e) => e.data.id)).toEqual(after);
    socket.close();
  });
});

describe('resuming on another instance', () => {
  it('a client that disconnects from A and resumes on B with since loses and duplicates nothing while writes continue', async () => {
    const start = await latestEventId(a.deps.orm.em.fork());
    let writing = true;
    const written: string[] = [];
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const [id] = await recordMarkers(i % 2 ? a : b, 1, `w${String(i)}`);
        if (id) written.push(id);
        await sleep(3);
      }
    })();
    const first = await subscribed(baseA, user, ['users'], String(start));
    const received = await first.events(20, 5000);
    first.close();
    await first.closed;
    await sleep(100);
    const second = await subscribed(baseB, user, ['users'], received.at(-1)?.id);
    received.push(...(await second.events(20, 5000)));
    writing = false;
    await writer;
    const rest = written.length - received.length;
    if (rest > 0) received.push(...(await second.events(rest, 5000)));
    expect(received.map((e) => e.data.id)).toEqual(written);
    const ids = received.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    second.close();
  });
});
