// WebSocket lifecycle: revocation closes with 4001, heartbeat, 1 MiB backpressure (1013), subscribe floods, shutdown (1001).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { kysely } from '../src/db/kysely.ts';
import { recordEvent } from '../src/events/record.ts';
import { latestEventId } from '../src/events/store.ts';
import { revokeSession } from '../src/services/auth/sessions.ts';
import { approvalData, listen, recordMarkers, sleep, TestSocket, ticketFor, until } from './helpers/events.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const PING_MS = 200;
const SILENCE_MS = 800;

let svc: TestService;
let base: string;
let ceo: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  base = await listen(svc);
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

const em = () => svc.deps.orm.em.fork();

async function subscribed(user: TestUser, channels: string[]): Promise<TestSocket> {
  const socket = await TestSocket.open(base, user);
  expect((await socket.request({ type: 'subscribe', channels })).type).toBe('subscribed');
  return socket;
}

describe('session revocation closes the socket with 4001 within 2 s', () => {
  it('revoked with its session.revoked event: the event is sent (whatever the channels), then close 4001', async () => {
    const user = await createUser(svc);
    const socket = await subscribed(user, ['approvals']);
    const started = Date.now();
    await em().transactional((tx) => revokeSession({ em: tx, clock: svc.deps.clock }, user.sessionId, 'revoked', { username: 'chief' }));
    const [event] = await socket.events(1, 2000);
    expect(event).toMatchObject({ type: 'session.revoked', channel: 'sessions', data: { session_id: user.sessionId, reason: 'revoked' } });
    expect(await socket.closed).toEqual({ code: 4001, reason: 'session revoked' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a revocation written without an event (another program) still closes it (the session sweep), within 2 s', async () => {
    const user = await createUser(svc);
    const socket = await subscribed(user, ['users']);
    const started = Date.now();
    await kysely(em()).updateTable('sessions').set({ revokedAt: new Date(), revokedReason: 'revoked' }).where('id', '=', user.sessionId).execute();
    expect((await socket.closed).code).toBe(4001);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('deleting the user closes the user\'s sockets with 4001 within 2 s', async () => {
    const user = await createUser(svc);
    const sockets = [await subscribed(user, ['users']), await subscribed(user, ['approvals'])];
    const started = Date.now();
    const res = await svc.app.inject({ method: 'DELETE', url: `/api/v1/users/${user.id}`, headers: ceo.headers });
    expect(res.statusCode).toBe(204);
    for (const socket of sockets) expect((await socket.closed).code).toBe(4001);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('other sessions of the same user keep their sockets', async () => {
    const user = await createUser(svc);
    const other = await subscribed(user, ['users']);
    const second = await createUser(svc);
    const keep = await subscribed(second, ['users']);
    await em().transactional((tx) => revokeSession({ em: tx, clock: svc.deps.clock }, user.sessionId, 'revoked', { username: null }));
    await other.closed;
    await sleep(1200);
    expect(await keep.request({ type: 'ping' })).toEqual({ type: 'pong' });
    keep.close();
  });
});

describe('heartbeat', () => {
  // A second instance on the same database with short intervals (the production ones are 25 s and 60 s).
  let fast: TestService;
  let fastBase: string;
  let user: TestUser;
  beforeAll(async () => {
    fast = await startTestService({ databaseUrl: svc.databaseUrl, env: { RATE_LIMITS_ENABLED: 'false' }, eventTimings: { pingIntervalMs: PING_MS, silenceLimitMs: SILENCE_MS } });
    fastBase = await listen(fast);
    user = await createUser(fast);
  });
  afterAll(() => fast.close());

  it(`the server pings every ${String(PING_MS)} ms (25 s in production); a client that answers stays connected`, async () => {
    const socket = await TestSocket.open(fastBase, user);
    let pings = 0;
    socket.ws.on('ping', () => pings++);
    await sleep(SILENCE_MS * 2);
    expect(pings).toBeGreaterThanOrEqual(3);
    expect(await socket.request({ type: 'ping' })).toEqual({ type: 'pong' });
    socket.close();
  });

  it(`a client that answers nothing for ${String(SILENCE_MS)} ms (60 s in production) is dropped`, async () => {
    const ticket = await ticketFor(user);
    const ws = new WebSocket(`${fastBase}/api/v1/ws?ticket=${ticket}`, { autoPong: false });
    await new Promise((resolve) => ws.once('open', resolve));
    const started = Date.now();
    const code = await new Promise<number>((resolve) => ws.once('close', resolve));
    expect(code).toBe(1006);
    expect(Date.now() - started).toBeGreaterThanOrEqual(SILENCE_MS - 50);
    expect(Date.now() - started).toBeLessThan(SILENCE_MS + 1000);
  });
});

describe('backpressure', () => {
  it('a client that stops reading is closed with 1013 once 1 MiB is unsent; nothing more is queued for it', async () => {
    const reader = await subscribed(ceo, ['users']);
    const ticket = await ticketFor(ceo);
    const slow = await TestSocket.open(base, { ticket });
    expect((await slow.request({ type: 'subscribe', channels: ['approvals'] })).type).toBe('subscribed');
    const streamsBefore = svc.deps.events.openStreams;
    const total = 1000;
    const data = approvalData(16 * 1024);
    // ~25 MB of events: more than the kernel's socket buffers on both sides plus the 1 MiB limit. The client
    // stops reading just before they commit (earlier, the heartbeat would drop it for not answering pings).
    await em().transactional(async (tx) => {
      for (let i = 0; i < total; i++) await recordEvent(tx, { type: 'approval.created', actor: 'load', data: { ...data, id: String(i) } });
      slow.ws.pause();
    });
    await until(() => svc.deps.events.openStreams === streamsBefore - 1, 10_000, 'the slow stream to be closed');
    const heapAfterClose = process.memoryUsage().heapUsed;
    // Later events are not queued for it: its stream is gone from the fan-out.
    await em().transactional(async (tx) => {
      for (let i = 0; i < 100; i++) await recordEvent(tx, { type: 'approval.created', actor: 'load', data: { ...data, id: `later-${String(i)}` } });
    });
    await recordMarkers(svc, 1, 'still-live');
    expect((await reader.events(1))[0]?.data.id).toBe('still-live-0');
    expect(process.memoryUsage().heapUsed - heapAfterClose).toBeLessThan(64 * 1024 * 1024);

    slow.ws.resume();
    const closed = await slow.closed;
    expect(closed.code).toBe(1013);
    const received = slow.pending().filter((f) => f.type === 'event');
    expect(received.length).toBeGreaterThan(0);
    expect(received.length).toBeLessThan(total);
    expect(received.every((f) => !String(f.event?.data.id).startsWith('later-'))).toBe(true);
    reader.close();
  });
});

describe('floods', () => {
  it('thousands of subscribe frames are answered in order while other sockets and requests stay responsive', async () => {
    const flooder = await TestSocket.open(base, ceo);
    const other = await TestSocket.open(base, ceo);
    const since = String(await latestEventId(em()));
    const frames = 3000;
    for (let i = 0; i < frames; i++) flooder.send({ type: 'subscribe', channels: [i % 2 ? 'users' : 'approvals'], ...(i % 10 === 0 ? { since } : {}) });
    const started = Date.now();
    expect(await other.request({ type: 'ping' }, 1000)).toEqual({ type: 'pong' });
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/healthz' })).statusCode).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    for (let i = 0; i < frames; i++) expect((await flooder.next(5000)).type).toBe('subscribed');
    expect(await flooder.request({ type: 'ping' })).toEqual({ type: 'pong' });
    flooder.close();
    other.close();
  });

  it('a flood of malformed frames is cut off at the 10th with 1008', async () => {
    const socket = await TestSocket.open(base, ceo);
    for (let i = 0; i < 1000; i++) socket.send('{');
    expect((await socket.closed).code).toBe(1008);
    expect(socket.pending().filter((f) => f.type === 'error')).toHaveLength(10);
  });
});

describe('shutdown', () => {
  it('closing the service closes its sockets with 1001', async () => {
    const other = await startTestService({ databaseUrl: svc.databaseUrl, env: { RATE_LIMITS_ENABLED: 'false' } });
    const otherBase = await listen(other);
    const user = await createUser(other);
    const socket = await TestSocket.open(otherBase, user);
    await other.close();
    expect((await socket.closed).code).toBe(1001);
  });
});
