// CONTRACT §4.10: open event streams (gauge), events delivered and dropped (counters), as GET /metrics shows them.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../src/events/record.ts';
import { revokeSession } from '../src/services/auth/sessions.ts';
import { approvalData, listen, recordMarkers, TestSocket, ticketFor, until } from './helpers/events.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const OPEN = 'agent_org_event_streams_open';
const DELIVERED = 'agent_org_events_delivered_total';
const DROPPED = 'agent_org_events_dropped_total';

let svc: TestService;
let base: string;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  base = await listen(svc);
});
// Every test closes what it opened; the next one starts from no open stream whatever the order.
afterEach(() => until(async () => (await metric(OPEN)) === 0, 5000, 'every stream of the test to be closed'));
afterAll(() => svc.close());

/** One unlabelled series of GET /metrics. */
async function metric(name: string, service: TestService = svc): Promise<number> {
  const res = await service.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  const line = res.body.split('\n').find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`${name} is not in GET /metrics`);
  return Number(line.slice(name.length + 1));
}

async function subscribed(user: TestUser, channels: string[], service = base): Promise<TestSocket> {
  const socket = await TestSocket.open(service, user);
  expect((await socket.request({ type: 'subscribe', channels })).type).toBe('subscribed');
  return socket;
}

/** GET /api/trpc/events.subscribe as a raw SSE response; `text()` is everything received so far. */
async function openSse(user: TestUser, channels: string[]) {
  const origin = base.replace(/^ws/, 'http');
  const controller = new AbortController();
  const res = await fetch(`${origin}/api/trpc/events.subscribe?input=${encodeURIComponent(JSON.stringify({ channels }))}`, { headers: user.headers, signal: controller.signal });
  const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
  if (!reader) throw new Error('no body');
  let received = '';
  const pump = (async () => {
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) received += chunk.value;
    } catch {
      // aborted by the test
    }
  })();
  await until(() => received.includes('event: connected'), 3000, 'the SSE stream to open');
  return {
    text: () => received,
    async close() {
      controller.abort();
      await pump;
    },
  };
}

describe('agent_org_event_streams_open', () => {
  it('rises when a WebSocket opens and falls when the client closes it', async () => {
    const user = await createUser(svc);
    expect(await metric(OPEN)).toBe(0);
    const first = await TestSocket.open(base, user);
    const second = await TestSocket.open(base, user);
    expect(await metric(OPEN)).toBe(2);
    first.close();
    await first.closed;
    await until(async () => (await metric(OPEN)) === 1, 3000, 'the gauge to fall to 1');
    second.close();
    await until(async () => (await metric(OPEN)) === 0, 3000, 'the gauge to fall to 0');
  });

  it('falls when the server closes a socket: session revoked (4001), too many bad frames (1008)', async () => {
    const user = await createUser(svc);
    const revoked = await subscribed(user, ['users']);
    const noisy = await TestSocket.open(base, await createUser(svc));
    expect(await metric(OPEN)).toBe(2);
    await svc.deps.orm.em.fork().transactional((tx) => revokeSession({ em: tx, clock: svc.deps.clock }, user.sessionId, 'revoked', { username: null }));
    expect((await revoked.closed).code).toBe(4001);
    await until(async () => (await metric(OPEN)) === 1, 3000, 'the revoked socket to leave the gauge');
    for (let i = 0; i < 10; i++) noisy.send('{');
    expect((await noisy.closed).code).toBe(1008);
    await until(async () => (await metric(OPEN)) === 0, 3000, 'the noisy socket to leave the gauge');
  });

  it('counts an SSE subscription (events.subscribe) while it is open', async () => {
    const user = await createUser(svc);
    const stream = await openSse(user, ['users']);
    expect(await metric(OPEN)).toBe(1);
    await stream.close();
    await until(async () => (await metric(OPEN)) === 0, 3000, 'the subscription to leave the gauge');
  });

  it('falls to 0 when the service shuts down with streams open (1001)', async () => {
    const own = await startTestService({ databaseUrl: svc.databaseUrl, env: { RATE_LIMITS_ENABLED: 'false' } });
    const ownBase = await listen(own);
    const user = await createUser(own);
    const socket = await subscribed(user, ['users'], ownBase);
    expect(await metric(OPEN, own)).toBe(1);
    await own.close();
    expect((await socket.closed).code).toBe(1001);
    // GET /metrics is gone with the server; the instrument it served is read directly.
    expect((await own.deps.metrics.eventStreams.get()).values[0]?.value).toBe(0);
  });
});

describe('agent_org_events_delivered_total', () => {
  it('rises by one per event written to each subscribed stream (WebSocket and SSE), not for streams not subscribed', async () => {
    const user = await createUser(svc);
    const ws = await subscribed(user, ['users']);
    const sse = await openSse(user, ['users']);
    const elsewhere = await subscribed(user, ['approvals']);
    const before = await metric(DELIVERED);
    const droppedBefore = await metric(DROPPED);
    const [id] = await recordMarkers(svc, 1, 'delivered');
    expect((await ws.events(1))[0]?.data.id).toBe(id);
    await until(() => sse.text().includes(`"id":"${String(id)}"`), 3000, 'the SSE event');
    await until(async () => (await metric(DELIVERED)) - before === 2, 3000, 'two deliveries to be counted');
    expect(elsewhere.pending()).toEqual([]);
    expect((await metric(DROPPED)) - droppedBefore).toBe(0);
    ws.close();
    elsewhere.close();
    await sse.close();
  });
});

describe('agent_org_events_dropped_total', () => {
  it('counts the events a socket closed for backpressure (1013) never got; delivered counts only what was written', async () => {
    const user = await createUser(svc);
    const slow = await TestSocket.open(base, { ticket: await ticketFor(user) });
    expect((await slow.request({ type: 'subscribe', channels: ['approvals'] })).type).toBe('subscribed');
    const delivered = await metric(DELIVERED);
    const dropped = await metric(DROPPED);
    const total = 1000;
    const data = approvalData(16 * 1024);
    // ~16 MB: more than both sides' socket buffers plus the 1 MiB limit; the client stops reading first.
    await svc.deps.orm.em.fork().transactional(async (tx) => {
      for (let i = 0; i < total; i++) await recordEvent(tx, { type: 'approval.created', actor: 'load', data: { ...data, id: String(i) } });
      slow.ws.pause();
    });
    await until(async () => (await metric(OPEN)) === 0, 10_000, 'the slow socket to be closed with 1013');
    // The client goes away without reading what was queued for it.
    slow.ws.terminate();
    await slow.closed;
    await until(async () => (await metric(DROPPED)) > dropped, 5000, 'the unsent events to be counted as dropped');
    const deliveredNow = (await metric(DELIVERED)) - delivered;
    const droppedNow = (await metric(DROPPED)) - dropped;
    expect(deliveredNow).toBeLessThan(total);
    // Events after the close no longer reach the socket: neither delivered nor dropped by it.
    expect(deliveredNow + droppedNow).toBeLessThanOrEqual(total);
    expect(slow.pending().filter((f) => f.type === 'event').length).toBeLessThanOrEqual(deliveredNow);
  });
});
