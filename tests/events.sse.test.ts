// events.subscribe over SSE: authenticated by bearer or cookie, tracked ids, resume with lastEventId, 1002 on revocation.
import { createTRPCClient, httpSubscriptionLink } from '@trpc/client';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { latestEventId, purgeEventsBefore } from '../src/events/store.ts';
import type { AppRouter } from '../src/routers/index.ts';
import { revokeSession } from '../src/services/auth/sessions.ts';
import { listen, recordMarkers, sleep, TestSocket, until } from './helpers/events.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const MAX_STREAMS = 2;
let svc: TestService;
let origin: string;
let user: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', EVENTS_MAX_STREAMS_PER_USER: String(MAX_STREAMS) } });
  origin = (await listen(svc)).replace(/^ws/, 'http');
});
// A user per test: the stream cap is per user, and a stream a previous test ended may still be counted.
beforeEach(async () => {
  user = await createUser(svc);
});
afterAll(() => svc.close());

type SseMessage = { event: string; data: unknown; id: string | undefined };

/** Opens GET /api/trpc/events.subscribe as an SSE stream and yields its messages. */
async function openSse(input: object, headers: Record<string, string>, base = origin) {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/trpc/events.subscribe?input=${encodeURIComponent(JSON.stringify(input))}`, { headers, signal: controller.signal });
  const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
  if (!reader) throw new Error('no body');
  let buffer = '';
  const queue: SseMessage[] = [];
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
          if (fields.data === undefined && fields.event === undefined) continue;
          queue.push({ event: fields.event ?? 'message', data: fields.data ? JSON.parse(fields.data) : null, id: fields.id });
        }
      }
    } catch {
      // aborted by the test
    } finally {
      done = true;
    }
  })();
  return {
    res,
    /** The next message that is not a keep-alive. */
    async next(timeoutMs = 3000): Promise<SseMessage> {
      await until(() => queue.length > 0 || done, timeoutMs, 'an SSE message');
      const message = queue.shift();
      if (!message) throw new Error('the stream ended');
      return message;
    },
    async events(count: number, timeoutMs = 3000): Promise<SseMessage[]> {
      const out: SseMessage[] = [];
      while (out.length < count) {
        const message = await this.next(timeoutMs);
        if (message.event === 'message') out.push(message);
      }
      return out;
    },
    get ended() {
      return done;
    },
    async close() {
      controller.abort();
      await pump;
    },
  };
}

describe('events.subscribe (SSE)', () => {
  it('streams the subscribed channels\' events, each with its id as the SSE id', async () => {
    const stream = await openSse({ channels: ['users'] }, user.headers);
    expect(stream.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect((await stream.next()).event).toBe('connected');
    const ids = await recordMarkers(svc, 3, 'sse');
    const events = await stream.events(3);
    expect(events.map((m) => (m.data as { data: { id: string } }).data.id)).toEqual(ids);
    for (const m of events) expect(m.id).toBe((m.data as { id: string }).id);
    await stream.close();
  });

  it('also works with the session cookie', async () => {
    const stream = await openSse({ channels: ['users'] }, { cookie: `session=${user.token}` });
    expect((await stream.next()).event).toBe('connected');
    await recordMarkers(svc, 1);
    expect(await stream.events(1)).toHaveLength(1);
    await stream.close();
  });

  it('without credentials the stream carries a 401/1000 error and ends', async () => {
    const stream = await openSse({ channels: ['users'] }, {});
    expect((await stream.next()).event).toBe('connected');
    const error = await stream.next();
    expect(error.event).toBe('serialized-error');
    expect(error.data).toMatchObject({ data: { problem: { status: 401, error_code: 1000 } } });
    await stream.close();
  });

  it('lastEventId (input or the Last-Event-ID header of a reconnecting EventSource) replays what came after it', async () => {
    const start = String(await latestEventId(svc.deps.orm.em.fork()));
    const ids = await recordMarkers(svc, 3, 'resume');
    for (const stream of [await openSse({ channels: ['users'], lastEventId: start }, user.headers), await openSse({ channels: ['users'] }, { ...user.headers, 'last-event-id': start })]) {
      expect((await stream.next()).event).toBe('connected');
      expect((await stream.events(3)).map((m) => (m.data as { data: { id: string } }).data.id)).toEqual(ids);
      await stream.close();
    }
  });

  it('a lastEventId older than the retention window is 409/4000', async () => {
    // Its own service and database: purging everything would make the other tests' replays too old.
    const own = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
    try {
      const ownOrigin = (await listen(own)).replace(/^ws/, 'http');
      const reader = await createUser(own);
      await recordMarkers(own, 1);
      // Ids are given at publication, just after the commit: purge only once the marker has one.
      await until(async () => Number(await latestEventId(own.deps.orm.em.fork())) > 0, 5000, 'the marker to be published');
      // Everything recorded so far is purged, as if it were older than EVENT_RETENTION_S.
      await purgeEventsBefore(own.deps.orm.em.fork(), new Date(Date.now() + 60_000));
      const stream = await openSse({ channels: ['users'], lastEventId: '0' }, reader.headers, ownOrigin);
      expect((await stream.next()).event).toBe('connected');
      expect((await stream.next()).data).toMatchObject({ data: { problem: { status: 409, error_code: 4000, detail: expect.stringMatching(/^events before \d+ are no longer retained$/) } } });
      await stream.close();
    } finally {
      await own.close();
    }
  });

  it('a revoked session gets its session.revoked event, then the stream ends with 401/1002', async () => {
    const victim = await createUser(svc);
    const stream = await openSse({ channels: ['approvals'] }, victim.headers);
    expect((await stream.next()).event).toBe('connected');
    await sleep(50);
    await svc.deps.orm.em.fork().transactional((tx) => revokeSession({ em: tx, clock: svc.deps.clock }, victim.sessionId, 'revoked', { username: null }));
    expect((await stream.next(2000)).data).toMatchObject({ type: 'session.revoked' });
    expect((await stream.next(2000)).data).toMatchObject({ data: { problem: { status: 401, error_code: 1002 } } });
    await stream.close();
  });

  it('a revocation written without an event (another program) ends the stream with 1002 within 2 s', async () => {
    const victim = await createUser(svc);
    const stream = await openSse({ channels: ['users'] }, victim.headers);
    expect((await stream.next()).event).toBe('connected');
    await kysely(svc.deps.orm.em.fork()).updateTable('sessions').set({ revokedAt: new Date(), revokedReason: 'revoked' }).where('id', '=', victim.sessionId).execute();
    expect((await stream.next(2000)).data).toMatchObject({ data: { problem: { error_code: 1002 } } });
    await stream.close();
  });

  it('SSE streams and sockets share the per-user cap: the next one is 429/5002', async () => {
    const capped = await createUser(svc);
    const socket = await TestSocket.open(origin.replace(/^http/, 'ws'), capped);
    const stream = await openSse({ channels: ['users'] }, capped.headers);
    expect((await stream.next()).event).toBe('connected');
    await sleep(50);
    const refused = await openSse({ channels: ['users'] }, capped.headers);
    await refused.next();
    expect((await refused.next()).data).toMatchObject({ data: { problem: { status: 429, error_code: 5002 } } });
    await refused.close();
    await stream.close();
    socket.close();
  });
});

describe('the dashboard\'s client (httpSubscriptionLink)', () => {
  it('receives tracked events and, after the connection drops, resumes from the last id without gap or duplicate', async () => {
    // An instance the test can stop and start again on the same port, so the EventSource reconnects.
    let instance = await startTestService({ databaseUrl: svc.databaseUrl, env: { RATE_LIMITS_ENABLED: 'false' } });
    const address = await instance.app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(address).port);
    const client = createTRPCClient<AppRouter>({
      links: [
        httpSubscriptionLink({
          url: `${address}/api/trpc`,
          EventSource,
          eventSourceOptions: { fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, ...user.headers } }) },
        }),
      ],
    });
    const received: { id: string; label: string }[] = [];
    const errors: unknown[] = [];
    const subscription = client.events.subscribe.subscribe(
      { channels: ['users'] },
      {
        onData: (tracked) => {
          if (tracked.data.type === 'user.deleted') received.push({ id: tracked.id, label: tracked.data.data.id });
        },
        onError: (error) => errors.push(error),
      },
    );
    try {
      await until(() => instance.deps.events.openStreams === 1, 3000, 'the subscription to open');
      const before = await recordMarkers(svc, 3, 'before-drop');
      await until(() => received.length === 3, 3000, 'the first events');
      await instance.close();
      // Committed while the client has no connection.
      const during = await recordMarkers(svc, 3, 'during-drop');
      instance = await startTestService({ databaseUrl: svc.databaseUrl, env: { RATE_LIMITS_ENABLED: 'false' } });
      await instance.app.listen({ port, host: '127.0.0.1' });
      await until(() => received.length === 6, 10_000, 'the events committed while disconnected');
      const after = await recordMarkers(svc, 2, 'after-drop');
      await until(() => received.length === 8, 3000, 'live events after the reconnect');
      expect(received.map((r) => r.label)).toEqual([...before, ...during, ...after]);
      const ids = received.map((r) => Number(r.id));
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      expect(errors).toEqual([]);
    } finally {
      subscription.unsubscribe();
      await instance.close();
    }
  });
});
