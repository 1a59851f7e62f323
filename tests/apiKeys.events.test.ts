// Live events with an API key (CONTRACT §3.5, §4.8): ws-ticket and events.subscribe need events:read, the stream acts as the key and ends within 2 s of its revocation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { recordEvent } from '../src/events/record.ts';
import { createServiceAccount, issueKey, type TestKey } from './helpers/apiKeys.ts';
import { approvalData, eventsUpToNow, listen, refusedUpgrade, TestSocket, until } from './helpers/events.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';
import type { Scope } from '../src/contracts/apiKeys.ts';

let svc: TestService;
let base: string;
let ceo: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  base = await listen(svc);
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

async function botKey(scopes: Scope[], role: 'manager' | 'observer' = 'observer'): Promise<TestKey> {
  const bot = await createServiceAccount(ceo, role);
  return issueKey(svc, ceo, scopes, { userId: bot.id });
}

async function ticketWith(key: TestKey): Promise<string> {
  const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: { ...key.headers, ...PROBLEM } });
  expect(res.statusCode).toBe(200);
  const ticket: string = res.json().data.ticket;
  return ticket;
}

async function socketOf(key: TestKey, channels: string[]): Promise<TestSocket> {
  const socket = await TestSocket.open(base, { ticket: await ticketWith(key) });
  expect((await socket.request({ type: 'subscribe', channels })).type).toBe('subscribed');
  return socket;
}

const recordApproval = () => svc.deps.orm.em.fork().transactional((tx) => recordEvent(tx, { type: 'approval.created', actor: 'alice', data: approvalData() }));

describe('the WebSocket with a key', () => {
  it('POST /auth/ws-ticket needs events:read (403/1001 without it)', async () => {
    const without = await botKey(['approvals:read']);
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: { ...without.headers, ...PROBLEM } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error_code: 1001, detail: 'the API key lacks the scope events:read' });
    const row = await kysely(svc.deps.orm.em.fork()).selectFrom('ws_tickets').select('ticketHash').where('userId', '=', without.userId).executeTakeFirst();
    expect(row).toBeUndefined();
  });

  it("the socket acts as the key: it receives a channel's events only with the scope that reads them", async () => {
    const key = await botKey(['events:read', 'users:read']);
    const socket = await socketOf(key, ['approvals', 'users']);
    // What committed before (the key's own account) may still be on its way: taken first.
    await eventsUpToNow(svc, socket);
    await recordApproval();
    const bot = await createServiceAccount(ceo);
    const received = await eventsUpToNow(svc, socket);
    expect(received.map((e) => e.type)).toEqual(['user.created']);
    expect(received[0]?.data).toMatchObject({ id: bot.id, kind: 'service' });
    socket.close();

    const reader = await botKey(['events:read', 'approvals:read', 'users:read']);
    const both = await socketOf(reader, ['approvals', 'users']);
    await eventsUpToNow(svc, both);
    await recordApproval();
    expect((await eventsUpToNow(svc, both)).map((e) => e.type)).toEqual(['approval.created']);
    both.close();
  });

  it('revoking the key closes its socket with 4001 within 2 s', async () => {
    const key = await botKey(['events:read', 'approvals:read']);
    const socket = await socketOf(key, ['approvals']);
    const started = Date.now();
    await ceo.caller.apiKeys.revoke({ key_id: key.id });
    expect((await socket.closed).code).toBe(4001);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a revocation through one instance closes the key\'s socket on another within 2 s', async () => {
    const other = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' }, databaseUrl: svc.databaseUrl });
    try {
      const otherBase = await listen(other);
      const key = await botKey(['events:read', 'approvals:read']);
      const socket = await TestSocket.open(otherBase, { ticket: await ticketWith(key) });
      expect((await socket.request({ type: 'subscribe', channels: ['approvals'] })).type).toBe('subscribed');
      const started = Date.now();
      await ceo.caller.apiKeys.revoke({ key_id: key.id });
      expect((await socket.closed).code).toBe(4001);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await other.close();
    }
  });

  it("deleting the key's user closes the socket with 4001 within 2 s", async () => {
    const key = await botKey(['events:read', 'users:read']);
    const socket = await socketOf(key, ['users']);
    const started = Date.now();
    await ceo.caller.users.delete({ user_id: key.userId });
    expect((await socket.closed).code).toBe(4001);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a ticket issued with a key is refused (401/1000) once the key is revoked', async () => {
    const key = await botKey(['events:read']);
    const ticket = await ticketWith(key);
    await ceo.caller.apiKeys.revoke({ key_id: key.id });
    const refused = await refusedUpgrade(`${base}/api/v1/ws?ticket=${encodeURIComponent(ticket)}`);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error_detail: { error_code: 1000 } });
  });

  it("a key's socket never receives the private sessions channel of its user", async () => {
    const person = await createUser(svc);
    const key = await issueKey(svc, person, ['events:read', 'users:read']);
    const socket = await socketOf(key, ['sessions', 'users']);
    // The person's session ends: that session's own stream would get the event; the key's must not.
    await svc.deps.orm.em.fork().transactional((tx) => recordEvent(tx, { type: 'session.revoked', actor: null, audience: person.id, data: { session_id: person.sessionId, reason: 'revoked' } }));
    expect((await eventsUpToNow(svc, socket)).map((e) => e.type)).not.toContain('session.revoked');
    socket.close();
  });
});

type SseMessage = { event: string; data: unknown };

/** GET /api/trpc/events.subscribe as an SSE stream, read message by message. */
async function openSse(input: object, headers: Record<string, string>) {
  const origin = base.replace(/^ws/, 'http');
  const controller = new AbortController();
  const res = await fetch(`${origin}/api/trpc/events.subscribe?input=${encodeURIComponent(JSON.stringify(input))}`, { headers, signal: controller.signal });
  const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
  if (!reader) throw new Error('no body');
  const queue: SseMessage[] = [];
  let buffer = '';
  let done = false;
  const pump = (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        buffer += chunk.value;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = Object.fromEntries(block.split('\n').filter((l) => l.includes(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trimStart()]));
          if (fields.data === undefined) continue;
          queue.push({ event: fields.event ?? 'message', data: JSON.parse(fields.data) });
        }
      }
    } catch {
      // aborted by the test
    } finally {
      done = true;
    }
  })();
  return {
    /** The next message that carries data (events, errors), skipping keep-alives and the connection's own. */
    async next(timeoutMs = 3000): Promise<SseMessage> {
      for (;;) {
        await until(() => queue.length > 0 || done, timeoutMs, 'an SSE message');
        const message = queue.shift();
        if (!message) throw new Error('the stream ended');
        if (message.event === 'message' || message.event === 'serialized-error') return message;
      }
    },
    async close() {
      controller.abort();
      await pump;
    },
  };
}

describe('events.subscribe (SSE) with a key', () => {
  it('streams with events:read, and ends with 401/1002 within 2 s of the revocation', async () => {
    const key = await botKey(['events:read', 'approvals:read']);
    const stream = await openSse({ channels: ['approvals'] }, key.headers);
    try {
      // Connected: the stream is admitted before events are recorded.
      await until(async () => (await kysely(svc.deps.orm.em.fork()).selectFrom('event_streams').select('id').where('apiKeyId', '=', key.id).execute()).length > 0, 3000, 'the stream registered');
      await recordApproval();
      expect((await stream.next()).data).toMatchObject({ type: 'approval.created' });
      const started = Date.now();
      await ceo.caller.apiKeys.revoke({ key_id: key.id });
      const end = await stream.next(2000);
      expect(end.event).toBe('serialized-error');
      expect(end.data).toMatchObject({ data: { problem: { status: 401, error_code: 1002 } } });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await stream.close();
    }
  });

  it('without events:read the stream carries 403/1001 and ends', async () => {
    const key = await botKey(['approvals:read']);
    const stream = await openSse({ channels: ['approvals'] }, key.headers);
    try {
      const error = await stream.next();
      expect(error.event).toBe('serialized-error');
      expect(error.data).toMatchObject({ data: { problem: { status: 403, error_code: 1001, detail: 'the API key lacks the scope events:read' } } });
    } finally {
      await stream.close();
    }
  });
});
