// GET /api/v1/ws: ticket admission, the subscribe/unsubscribe/ping protocol, replay with `since`, error frames, authorization per event.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MikroORM } from '@mikro-orm/postgresql';
import { kysely } from '../src/db/kysely.ts';
import { ormOptions } from '../src/db/ormConfig.ts';
import { recordEvent } from '../src/events/record.ts';
import { latestEventId } from '../src/events/store.ts';
import { approvalData, listen, marker, recordMarkers, refusedUpgrade, sleep, TestSocket, ticketFor } from './helpers/events.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';
import type { Clock } from '../src/contracts/clock.ts';

let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
const MAX_STREAMS = 3;

let svc: TestService;
let base: string;
let alice: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', EVENTS_MAX_STREAMS_PER_USER: String(MAX_STREAMS) }, clock });
  base = await listen(svc);
});
// A user per test: the stream cap is per user, and a socket a previous test closed may still be counted.
beforeEach(async () => {
  alice = await createUser(svc, { role: 'manager' });
});
afterAll(() => svc.close());

const wsUrl = (ticket?: string) => `${base}/api/v1/ws${ticket === undefined ? '' : `?ticket=${encodeURIComponent(ticket)}`}`;
const httpUrl = (ticket?: string) => wsUrl(ticket).replace(/^ws/, 'http');
const em = () => svc.deps.orm.em.fork();
const recordApproval = (data = approvalData(), actor = 'alice') => em().transactional((tx) => recordEvent(tx, { type: 'approval.created', actor, data }));

async function subscribed(user: TestUser, channels: string[], since?: string): Promise<TestSocket> {
  const socket = await TestSocket.open(base, user);
  expect(await socket.request({ type: 'subscribe', channels, ...(since === undefined ? {} : { since }) })).toEqual({ type: 'subscribed', channels: expect.arrayContaining(channels) });
  return socket;
}

describe('the upgrade: single-use tickets redeemed in PostgreSQL', () => {
  it('without a ticket: 401/1000 in the error envelope (default), with X-Request-Id', async () => {
    const res = await refusedUpgrade(wsUrl());
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ data: null, success: false, error_detail: { error_code: 1000, error_category: 'auth', instance: res.headers['x-request-id'] } });
  });

  it('an unknown or malformed ticket: 401/1000 as a bare ProblemDetail when Accept prefers it', async () => {
    for (const ticket of ['T'.repeat(43), 'not a ticket!', '']) {
      const res = await refusedUpgrade(wsUrl(ticket), PROBLEM);
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(res.body).toMatchObject({ status: 401, error_code: 1000, title: 'Authentication Error', type: 'http://agent-org.test/docs/errors#auth' });
    }
  });

  it('a ticket works once: the second upgrade with it is 401', async () => {
    const ticket = await ticketFor(alice);
    const first = await TestSocket.open(base, { ticket });
    const second = await refusedUpgrade(wsUrl(ticket), PROBLEM);
    expect(second).toMatchObject({ status: 401, body: { error_code: 1000, detail: 'invalid, expired or already used ticket' } });
    first.close();
  });

  it('of concurrent upgrades with one ticket exactly one is accepted', async () => {
    const ticket = await ticketFor(alice);
    const attempts = await Promise.allSettled(Array.from({ length: 5 }, () => TestSocket.open(base, { ticket })));
    const opened = attempts.filter((a) => a.status === 'fulfilled');
    expect(opened).toHaveLength(1);
    for (const a of opened) a.value.close();
  });

  it('an expired ticket (older than 30 s) is 401', async () => {
    const ticket = await ticketFor(alice);
    offsetMs = 31_000;
    try {
      expect((await refusedUpgrade(wsUrl(ticket), PROBLEM)).status).toBe(401);
    } finally {
      offsetMs = 0;
    }
  });

  it('a ticket of a session that has since logged out is 401', async () => {
    const user = await createUser(svc);
    const ticket = await ticketFor(user);
    await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: user.headers });
    expect((await refusedUpgrade(wsUrl(ticket), PROBLEM)).status).toBe(401);
  });

  it('a redeemed ticket no longer counts toward the 5 unredeemed tickets a user may hold', async () => {
    const user = await createUser(svc);
    const tickets = [];
    for (let i = 0; i < 5; i++) tickets.push(await ticketFor(user));
    await expect(user.caller.auth.wsTicket()).rejects.toMatchObject({ errorCode: 4000 });
    const socket = await TestSocket.open(base, { ticket: tickets[0] ?? '' });
    await expect(user.caller.auth.wsTicket()).resolves.toMatchObject({ expires_in: 30 });
    socket.close();
  });

  it('a plain GET (no upgrade) with a valid ticket is 400/2001 and leaves the ticket usable; with a bad one it is 401', async () => {
    const ticket = await ticketFor(alice);
    const plain = await fetch(httpUrl(ticket), { headers: PROBLEM });
    expect(plain.status).toBe(400);
    expect(await plain.json()).toMatchObject({ error_code: 2001 });
    (await TestSocket.open(base, { ticket })).close();
    expect((await fetch(httpUrl('T'.repeat(43)))).status).toBe(401);
    expect((await fetch(httpUrl())).status).toBe(401);
  });

  it('other methods on /api/v1/ws and /api/v1/asyncapi.json are 405 with Allow', async () => {
    for (const url of ['/api/v1/ws', '/api/v1/asyncapi.json']) {
      const res = await svc.app.inject({ method: 'POST', url, headers: PROBLEM });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.json()).toMatchObject({ error_code: 2001 });
    }
  });

  it(`a user's ${String(MAX_STREAMS + 1)}th open stream is refused with 429/5002 (Retry-After 1), and that ticket stays usable`, async () => {
    const user = await createUser(svc);
    const open = [];
    for (let i = 0; i < MAX_STREAMS; i++) open.push(await TestSocket.open(base, user));
    const ticket = await ticketFor(user);
    const refused = await refusedUpgrade(wsUrl(ticket), PROBLEM);
    expect(refused).toMatchObject({ status: 429, headers: { 'retry-after': '1' }, body: { error_code: 5002, retryable: true, retry_after: 1 } });
    // Another user is not affected.
    (await TestSocket.open(base, alice)).close();
    open[0]?.close();
    await open[0]?.closed;
    await sleep(200);
    const again = await TestSocket.open(base, { ticket });
    again.close();
    for (const s of open.slice(1)) s.close();
  });
});

describe('the protocol', () => {
  it('subscribe → subscribed; a committed change → {type: "event", event: {id, type, channel, occurred_at, actor, data}}', async () => {
    const socket = await subscribed(alice, ['approvals']);
    const data = approvalData();
    await recordApproval(data);
    const frame = await socket.next();
    expect(frame).toEqual({
      type: 'event',
      event: { id: expect.stringMatching(/^\d+$/), type: 'approval.created', channel: 'approvals', occurred_at: expect.stringMatching(/Z$/), actor: 'alice', data },
    });
    socket.close();
  });

  it('ping → pong', async () => {
    const socket = await TestSocket.open(base, alice);
    expect(await socket.request({ type: 'ping' })).toEqual({ type: 'pong' });
    socket.close();
  });

  it('subscribed always lists every channel of the socket; unsubscribe stops a channel', async () => {
    const socket = await subscribed(alice, ['approvals']);
    expect(await socket.request({ type: 'subscribe', channels: ['users', 'users'] })).toEqual({ type: 'subscribed', channels: ['approvals', 'users'] });
    expect(await socket.request({ type: 'unsubscribe', channels: ['approvals', 'setup'] })).toEqual({ type: 'subscribed', channels: ['users'] });
    await recordApproval();
    await recordMarkers(svc, 1, 'after-unsubscribe');
    const [event] = await socket.events(1);
    expect(event).toMatchObject({ type: 'user.deleted', data: { id: 'after-unsubscribe-0' } });
    socket.close();
  });

  it('events of channels the socket did not subscribe to never arrive', async () => {
    const socket = await subscribed(alice, ['reviews']);
    await recordApproval();
    await recordMarkers(svc, 1);
    await em().transactional((tx) =>
      recordEvent(tx, { type: 'review.stage_decided', actor: 'alice', data: { task_id: 't', stage_name: 's', verdict: 'pass', reason: null, decided_by: 'alice', decided_at: new Date().toISOString() } }),
    );
    expect((await socket.events(1))[0]?.type).toBe('review.stage_decided');
    expect(socket.pending()).toEqual([]);
    socket.close();
  });

  it('with since, the retained events after it are replayed first, then live ones follow', async () => {
    const start = String(await latestEventId(em()));
    const earlier = await recordMarkers(svc, 3, 'replayed');
    const socket = await subscribed(alice, ['users'], start);
    const replayed = await socket.events(3);
    expect(replayed.map((e) => e.data.id)).toEqual(earlier);
    await recordMarkers(svc, 1, 'live');
    expect((await socket.events(1))[0]?.data.id).toBe('live-0');
    socket.close();
  });

  it('per socket, events arrive in id order even when writers commit concurrently', async () => {
    const socket = await subscribed(alice, ['users', 'approvals']);
    await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? recordMarkers(svc, 3) : Promise.all([recordApproval(), recordApproval()]))));
    const events = await socket.events(6 * 3 + 6 * 2);
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    socket.close();
  });

  it('a since older than the last event this socket was sent is refused (2001): it would break id order', async () => {
    const socket = await subscribed(alice, ['users']);
    await recordMarkers(svc, 1);
    const [event] = await socket.events(1);
    const frame = await socket.request({ type: 'subscribe', channels: ['approvals'], since: String(Number(event?.id) - 1) });
    expect(frame).toMatchObject({ type: 'error', error: { status: 400, error_code: 2001, detail: expect.stringContaining('since') } });
    socket.close();
  });
});

describe('malformed frames', () => {
  const requestId = `req-${randomUUID()}`;
  const open = () => TestSocket.open(base, alice, { 'x-request-id': requestId });

  it.each([
    ['malformed JSON', '{"type": "subscribe"', 'malformed JSON'],
    ['an unknown frame type', { type: 'subscribe_all' }, 'type: must be one of subscribe, unsubscribe, ping'],
    ['an unknown channel', { type: 'subscribe', channels: ['approvals', 'payroll'] }, 'channels.1: must be one of approvals, reviews, users, setup, sessions'],
    ['no channels', { type: 'subscribe', channels: [] }, 'channels: must have at least 1 items'],
    ['an unknown field', { type: 'ping', extra: 1 }, 'unknown field extra'],
    ['a since that is not an id', { type: 'subscribe', channels: ['users'], since: '-1' }, 'since: must be an event id (decimal digits)'],
    ['a JSON value that is not an object', '[1,2]', 'frame: must be object'],
  ])('%s → an error frame 400/2001 naming the problem; the socket stays open', async (_name, frame, detail) => {
    const socket = await open();
    const answer = await socket.request(frame);
    expect(answer).toMatchObject({ type: 'error', error: { status: 400, error_code: 2001, error_category: 'validation', detail: expect.stringContaining(detail) } });
    expect(await socket.request({ type: 'ping' })).toEqual({ type: 'pong' });
    socket.close();
  });

  it('a binary frame → 2001', async () => {
    const socket = await open();
    socket.ws.send(Buffer.from('{"type":"ping"}'), { binary: true });
    expect(await socket.next()).toMatchObject({ type: 'error', error: { error_code: 2001, detail: expect.stringContaining('binary') } });
    socket.close();
  });

  it('error frames carry the ProblemDetail of §2.2 with the upgrade request id as instance', async () => {
    const socket = await open();
    const answer = await socket.request('nope');
    expect(answer.error).toEqual({
      type: 'http://agent-org.test/docs/errors#validation',
      title: 'Validation Error',
      status: 400,
      detail: 'malformed JSON',
      instance: requestId,
      error_code: 2001,
      error_category: 'validation',
      retryable: false,
      retry_after: null,
    });
    socket.close();
  });

  it('9 bad frames leave the socket open; the 10th gets its error frame and then close 1008', async () => {
    const socket = await open();
    for (let i = 0; i < 9; i++) expect((await socket.request('x')).type).toBe('error');
    expect(await socket.request({ type: 'ping' })).toEqual({ type: 'pong' });
    expect((await socket.request('x')).type).toBe('error');
    expect((await socket.closed).code).toBe(1008);
  });

  it('a frame larger than 64 KiB closes the socket with 1009', async () => {
    const socket = await open();
    socket.send({ type: 'ping', pad: 'x'.repeat(70 * 1024) });
    expect((await socket.closed).code).toBe(1009);
  });
});

describe('authorization per event', () => {
  it('sessions events reach only the session\'s own user; another session of the same user is reported without closing', async () => {
    const bob = await createUser(svc);
    const carol = await createUser(svc);
    const bobSocket = await subscribed(bob, ['sessions']);
    const carolSocket = await subscribed(carol, ['sessions']);
    await em().transactional((tx) => recordEvent(tx, { type: 'session.revoked', actor: null, audience: bob.id, data: { session_id: 'another-session-of-bob', reason: 'evicted' } }));
    expect(await bobSocket.events(1)).toMatchObject([{ type: 'session.revoked', channel: 'sessions', data: { session_id: 'another-session-of-bob', reason: 'evicted' } }]);
    expect(await carolSocket.request({ type: 'ping' })).toEqual({ type: 'pong' });
    expect(bobSocket.ws.readyState).toBe(WebSocket.OPEN);
    bobSocket.close();
    carolSocket.close();
  });

  it('a change of the viewer\'s own user applies from the next event (a required password change stops delivery)', async () => {
    const dave = await createUser(svc);
    const socket = await subscribed(dave, ['approvals', 'users']);
    const setPending = async (pending: boolean) =>
      em().transactional(async (tx) => {
        const row = await kysely(tx).updateTable('users').set({ mustChangePassword: pending }).where('id', '=', dave.id).returning(['id', 'username', 'role', 'createdAt', 'updatedAt']).executeTakeFirstOrThrow();
        await recordEvent(tx, {
          type: 'user.updated',
          actor: 'ceo',
          data: { id: row.id, username: row.username, role: 'observer', kind: 'human', must_change_password: pending, mfa_enabled: false, org_roles: [], scoped_departments: [], created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString() },
        });
      });
    await setPending(true);
    // The event that makes the change is still sent under the old authorization…
    expect(await socket.events(1)).toMatchObject([{ type: 'user.updated', data: { id: dave.id, must_change_password: true } }]);
    // …the next ones are not, also after the session sweep has re-read the user.
    await recordApproval();
    await sleep(1500);
    await recordApproval();
    expect(await socket.request({ type: 'ping' })).toEqual({ type: 'pong' });
    await setPending(false);
    await recordApproval();
    const [event] = await socket.events(1);
    expect(event?.type).toBe('approval.created');
    socket.close();
  });

  it('a change made elsewhere, whose event is not published yet when the session sweep reads it, still applies from that event on', async () => {
    // No publication poll here: the change below is published only by what the session sweep does itself.
    const own = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' }, clock, eventTimings: { publishPollMs: 600_000 } });
    // Another program (as npm run admin does) writes the change and its event, and publishes nothing.
    const elsewhere = await MikroORM.init(ormOptions(own.databaseUrl));
    try {
      const erin = await createUser(own);
      const socket = await TestSocket.open(await listen(own), erin);
      expect(await socket.request({ type: 'subscribe', channels: ['approvals', 'users'] })).toMatchObject({ type: 'subscribed' });
      const setPending = (on: MikroORM, pending: boolean) =>
        on.em.fork().transactional(async (tx) => {
          const row = await kysely(tx).updateTable('users').set({ mustChangePassword: pending }).where('id', '=', erin.id).returning(['id', 'username', 'createdAt', 'updatedAt']).executeTakeFirstOrThrow();
          await recordEvent(tx, {
            type: 'user.updated',
            actor: 'ceo',
            data: { id: row.id, username: row.username, role: 'observer', kind: 'human', must_change_password: pending, mfa_enabled: false, org_roles: [], scoped_departments: [], created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString() },
          });
        });
      await setPending(own.deps.orm, true);
      expect(await socket.events(1)).toMatchObject([{ type: 'user.updated', data: { must_change_password: true } }]);
      await setPending(elsewhere, false);
      // The sweep (every second) reads the flag off again; the event that turned it off is still unpublished.
      await sleep(1500);
      await own.deps.events.publish();
      await own.deps.orm.em.fork().transactional((tx) => recordEvent(tx, { type: 'approval.created', actor: 'alice', data: approvalData() }));
      // That event was judged under the authorization before it (a pending password change: not sent); the next one is sent.
      const [event] = await socket.events(1);
      expect(event?.type).toBe('approval.created');
      socket.close();
    } finally {
      await elsewhere.close(true);
      await own.close();
    }
  });
});

describe('live and replayed events are the committed ones, once', () => {
  it('an event recorded in a transaction that rolls back never reaches a socket', async () => {
    const socket = await subscribed(alice, ['users']);
    await expect(
      em().transactional(async (tx) => {
        await recordEvent(tx, { type: 'user.deleted', actor: null, data: marker('never') });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow();
    await recordMarkers(svc, 1, 'committed');
    expect((await socket.events(1))[0]?.data.id).toBe('committed-0');
    socket.close();
  });
});
