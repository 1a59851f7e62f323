// Webhook deliveries (CONTRACT §4.12): queued with the event, signed per Standard Webhooks (verified by the standardwebhooks package itself), retried, given up, turned off, listed, redelivered.
import { execFile } from 'node:child_process';
import type { IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { recordEvent } from '../src/events/record.ts';
import { purgeEventsBefore } from '../src/events/store.ts';
import { runAttempt } from '../src/services/webhooks/delivery.ts';
import { SERVICE_VERSION } from '../src/version.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';
import { closedPort, startReceiver, type Received, type Receiver } from './helpers/webhooks.ts';

// Only loopback receivers this file starts are ever contacted (WEBHOOK_ALLOW_PRIVATE lets the webhooks point at them).
const ENV = {
  RATE_LIMITS_ENABLED: 'false',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_RETRY_BASE_S: '1',
  WEBHOOK_MAX_ATTEMPTS: '2',
  WEBHOOK_DISABLE_AFTER: '3',
  WEBHOOK_TIMEOUT_S: '1',
};

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: ENV });
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

const APPROVAL = { action_type: 'deploy:production', title: 'Ship', description: 'Release', risk_level: 'low' } as const;

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, body?: unknown, on: TestService = svc, user: TestUser = ceo) =>
  on.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: { ...user.headers, ...PROBLEM, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });

type Hook = { id: string; secret: string; receiver: Receiver };

/** A receiver of its own and a webhook to it; the test's `work`, then the webhook deleted and the receiver closed. */
async function withHook(eventTypes: string[], work: (hook: Hook) => Promise<void>, opts: { url?: string; on?: TestService; user?: TestUser } = {}): Promise<void> {
  const receiver = await startReceiver();
  const on = opts.on ?? svc;
  const res = await call('POST', '/webhooks', { url: opts.url ?? receiver.url, event_types: eventTypes }, on, opts.user ?? ceo);
  expect(res.statusCode).toBe(201);
  const hook: Hook = { ...(res.json().data as { id: string; secret: string }), receiver };
  try {
    await work(hook);
  } finally {
    await call('DELETE', `/webhooks/${hook.id}`, undefined, on, opts.user ?? ceo);
    await receiver.close();
  }
}

/** The headers as standardwebhooks takes them (Node may hand over a repeated header as an array). */
function flat(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : Array.isArray(v) ? [[k, v.join(', ')]] : [])));
}

type Delivery = {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  response_status: number | null;
  error: string | null;
  created_at: string;
  succeeded_at: string | null;
};

async function deliveries(webhookId: string, query = ''): Promise<Delivery[]> {
  const res = await call('GET', `/webhooks/${webhookId}/deliveries${query}`);
  expect(res.statusCode).toBe(200);
  const list: Delivery[] = res.json().data;
  return list;
}

/** Polls the deliveries until `done` holds (deliveries settle a moment after the receiver has answered). */
async function until(webhookId: string, done: (list: Delivery[]) => boolean, timeoutMs = 15_000): Promise<Delivery[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await deliveries(webhookId);
    if (done(list)) return list;
    if (Date.now() > deadline) throw new Error(`deliveries never settled: ${JSON.stringify(list)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The `type` and `id` of the event a received request carries. */
function typeOf(r: Received): string {
  const event: { type: string } = JSON.parse(r.body);
  return event.type;
}
function idOf(r: Received): string {
  const event: { id: string } = JSON.parse(r.body);
  return event.id;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a delivery', () => {
  it('is POSTed for a matching event; a receiver using standardwebhooks verifies it unchanged; the body is the event of §4.8 with its id', async () => {
    await withHook(['approval.created'], async ({ id, secret, receiver }) => {
      const approval = await ceo.caller.approvals.create(APPROVAL);
      const [got] = await receiver.waitFor(1);
      if (!got) throw new Error('nothing received');
      const verified = new Webhook(secret).verify(got.body, flat(got.headers));
      expect(verified).toEqual(JSON.parse(got.body));
      const event: { id: string } = JSON.parse(got.body);
      expect(Object.keys(event)).toEqual(['id', 'type', 'channel', 'occurred_at', 'actor', 'data']);
      expect(event).toMatchObject({ type: 'approval.created', channel: 'approvals', actor: ceo.username, data: { id: approval.id, title: 'Ship' } });
      const row = await kysely(svc.deps.orm.em.fork()).selectFrom('events').selectAll().where('type', '=', 'approval.created').where('id', '=', Number(event.id)).executeTakeFirstOrThrow();
      expect(row.data).toMatchObject({ id: approval.id });
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['user-agent']).toBe(`agent-org-webhooks/${SERVICE_VERSION}`);
      expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
      expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      const [delivery] = await until(id, (list) => list[0]?.status === 'succeeded');
      expect(got.headers['webhook-id']).toBe(delivery?.id);
      expect(delivery).toMatchObject({ webhook_id: id, event_id: event.id, event_type: 'approval.created', attempts: 1, response_status: 200, error: null });
    });
  });

  it('a signature made with another secret does not verify (the receiver would refuse a forgery)', async () => {
    await withHook(['approval.created'], async ({ receiver }) => {
      await ceo.caller.approvals.create(APPROVAL);
      const [got] = await receiver.waitFor(1);
      if (!got) throw new Error('nothing received');
      const other = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      expect(() => new Webhook(other).verify(got.body, flat(got.headers))).toThrow();
    });
  });

  it('matches by event type or by <channel>.*; other events queue nothing; a private session event never leaves', async () => {
    await withHook(['approval.approved'], async (exact) => {
      await withHook(['approvals.*'], async (channel) => {
        await withHook(['users.*'], async (users) => {
          const approval = await ceo.caller.approvals.create(APPROVAL);
          const approver = await createUser(svc, { role: 'manager' });
          await approver.caller.approvals.approve({ approval_id: approval.id, comment: null });
          await ceo.caller.users.create({ username: `relay_${Date.now()}`, password: 'a long enough password 1', role: 'observer' });
          await channel.receiver.waitFor(2);
          await exact.receiver.waitFor(1);
          await users.receiver.waitFor(1);
          // A session ended: session.revoked is recorded, delivered to nobody outside.
          await approver.caller.auth.logout();
          await sleep(800);
          expect(exact.receiver.received.map(typeOf)).toEqual(['approval.approved']);
          expect(channel.receiver.received.map(typeOf).sort()).toEqual(['approval.approved', 'approval.created']);
          expect(users.receiver.received.map(typeOf)).toEqual(['user.created']);
        });
      });
    });
  });

  it('a disabled webhook queues nothing new', async () => {
    await withHook(['approvals.*'], async ({ id, receiver }) => {
      expect((await call('PATCH', `/webhooks/${id}`, { enabled: false })).statusCode).toBe(200);
      await ceo.caller.approvals.create(APPROVAL);
      await sleep(800);
      expect(receiver.received).toHaveLength(0);
      expect(await deliveries(id)).toEqual([]);
    });
  });

  it('is queued in the same transaction as its event: a change that rolls back leaves no delivery', async () => {
    await withHook(['users.*'], async ({ id, receiver }) => {
      const em = svc.deps.orm.em.fork();
      const data = { id: '00000000-0000-4000-8000-0000000000aa', username: 'ghost' };
      await expect(
        em.transactional(async (tx) => {
          await recordEvent(tx, { type: 'user.deleted', actor: null, data });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      await em.fork().transactional((tx) => recordEvent(tx, { type: 'user.deleted', actor: null, data }));
      await receiver.waitFor(1);
      await sleep(500);
      expect(receiver.received).toHaveLength(1);
      expect(await deliveries(id)).toHaveLength(1);
    });
  });
});

describe('attempts', () => {
  it('a failed attempt is retried (same webhook-id, the body byte for byte the same) after WEBHOOK_RETRY_BASE_S × 1 ±20 %', async () => {
    await withHook(['approvals.*'], async ({ id, secret, receiver }) => {
      receiver.answers.push({ status: 500 });
      await ceo.caller.approvals.create(APPROVAL);
      const [first] = await receiver.waitFor(1);
      const pending = await until(id, (list) => list[0]?.error === 'HTTP 500');
      expect(pending[0]).toMatchObject({ status: 'pending', attempts: 1, response_status: 500 });
      expect(pending[0]?.next_attempt_at).not.toBeNull();
      const [, second] = await receiver.waitFor(2);
      if (!first || !second) throw new Error('attempts missing');
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(second.body).toBe(first.body);
      expect(second.at - first.at).toBeGreaterThanOrEqual(700);
      expect(second.at - first.at).toBeLessThan(4000);
      new Webhook(secret).verify(second.body, flat(second.headers));
      const [done] = await until(id, (list) => list[0]?.status === 'succeeded');
      expect(done).toMatchObject({ attempts: 2, response_status: 200, error: null, next_attempt_at: null });
      expect(done?.succeeded_at).not.toBeNull();
    });
  });

  it('after WEBHOOK_MAX_ATTEMPTS failed attempts the delivery is failed, with the last error', async () => {
    await withHook(['approvals.*'], async ({ id, receiver }) => {
      receiver.fallback = { status: 503 };
      await ceo.caller.approvals.create(APPROVAL);
      const [failed] = await until(id, (list) => list[0]?.status === 'failed');
      expect(failed).toMatchObject({ attempts: 2, response_status: 503, error: 'HTTP 503', next_attempt_at: null, succeeded_at: null });
      await sleep(1500);
      expect(receiver.received).toHaveLength(2);
    });
  });

  it('410 Gone stops at once: failed after one attempt, the webhook disabled ("endpoint answered 410"), nothing new queued', async () => {
    await withHook(['approvals.*'], async ({ id, receiver }) => {
      receiver.fallback = { status: 410 };
      await ceo.caller.approvals.create(APPROVAL);
      const [failed] = await until(id, (list) => list[0]?.status === 'failed');
      expect(failed).toMatchObject({ attempts: 1, response_status: 410, error: 'HTTP 410' });
      expect((await call('GET', `/webhooks/${id}`)).json().data).toMatchObject({ enabled: false, disabled_reason: 'endpoint answered 410' });
      const audit = await kysely(svc.deps.orm.em.fork()).selectFrom('audit_entries').selectAll().where('targetId', '=', id).where('type', '=', 'webhook.disabled').execute();
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ actor: null, actorType: 'system', data: { reason: 'endpoint answered 410' } });
      await ceo.caller.approvals.create(APPROVAL);
      await sleep(800);
      expect(await deliveries(id)).toHaveLength(1);
      expect(receiver.received).toHaveLength(1);
    });
  });

  it('WEBHOOK_DISABLE_AFTER consecutive failed deliveries turn the webhook off ("too many failed deliveries"); a success in between resets the count', async () => {
    await withHook(['approvals.*'], async ({ id, receiver }) => {
      receiver.fallback = { status: 500 };
      const failOne = async (n: number) => {
        await ceo.caller.approvals.create(APPROVAL);
        await until(id, (list) => list.filter((d) => d.status === 'failed').length >= n, 20_000);
      };
      await failOne(1);
      await failOne(2);
      // A success: the run of failures starts again.
      receiver.answers.push({ status: 200 });
      await ceo.caller.approvals.create(APPROVAL);
      await until(id, (list) => list.some((d) => d.status === 'succeeded'));
      await failOne(3);
      await failOne(4);
      expect((await call('GET', `/webhooks/${id}`)).json().data).toMatchObject({ enabled: true });
      await failOne(5);
      expect((await call('GET', `/webhooks/${id}`)).json().data).toMatchObject({ enabled: false, disabled_reason: 'too many failed deliveries' });
    });
  }, 60_000);

  it('a receiver that never answers fails the attempt with "timeout" within WEBHOOK_TIMEOUT_S, and the worker goes on', async () => {
    await withHook(['approvals.*'], async ({ id, receiver }) => {
      receiver.fallback = { hang: true };
      await ceo.caller.approvals.create(APPROVAL);
      const [pending] = await until(id, (list) => list[0]?.error === 'timeout', 5000);
      expect(pending).toMatchObject({ status: 'pending', attempts: 1, response_status: null });
    });
    // The same worker delivers the next event at once.
    await withHook(['approvals.*'], async ({ receiver }) => {
      await ceo.caller.approvals.create(APPROVAL);
      await receiver.waitFor(1, 3000);
    });
  });

  it('nothing listening: "connection refused"', async () => {
    const port = await closedPort();
    await withHook(
      ['approvals.*'],
      async ({ id }) => {
        await ceo.caller.approvals.create(APPROVAL);
        const [pending] = await until(id, (list) => list[0]?.error !== null && list[0]?.error !== undefined);
        expect(pending).toMatchObject({ error: 'connection refused', response_status: null });
      },
      { url: `http://127.0.0.1:${port}/hook` },
    );
  });

  it('a redirect is not followed: "redirect not followed", and the target is never requested', async () => {
    await withHook(['approvals.*'], async ({ id, receiver }) => {
      receiver.fallback = { status: 307, headers: { location: `${receiver.url}/moved` } };
      await ceo.caller.approvals.create(APPROVAL);
      const [pending] = await until(id, (list) => list[0]?.error !== null && list[0]?.error !== undefined);
      expect(pending).toMatchObject({ error: 'redirect not followed', response_status: 307 });
      expect(receiver.received.every((r) => r.headers['webhook-id'] === receiver.received[0]?.headers['webhook-id'])).toBe(true);
    });
  });

  it('after rotate-secret the old secret stops signing at once', async () => {
    await withHook(['approvals.*'], async ({ id, secret: old, receiver }) => {
      const { secret }: { secret: string } = (await call('POST', `/webhooks/${id}/rotate-secret`)).json().data;
      await ceo.caller.approvals.create(APPROVAL);
      const [got] = await receiver.waitFor(1);
      if (!got) throw new Error('nothing received');
      new Webhook(secret).verify(got.body, flat(got.headers));
      expect(() => new Webhook(old).verify(got.body, flat(got.headers))).toThrow();
    });
  });

  it('deleting the webhook drops its pending deliveries: a queued retry never goes out', async () => {
    const receiver = await startReceiver();
    try {
      receiver.answers.push({ status: 500 });
      const created: { id: string } = (await call('POST', '/webhooks', { url: receiver.url, event_types: ['approvals.*'] })).json().data;
      await ceo.caller.approvals.create(APPROVAL);
      await until(created.id, (list) => list[0]?.error === 'HTTP 500');
      expect((await call('DELETE', `/webhooks/${created.id}`)).statusCode).toBe(204);
      const left = await kysely(svc.deps.orm.em.fork()).selectFrom('webhook_deliveries').select('id').where('webhookId', '=', created.id).execute();
      expect(left).toEqual([]);
      await sleep(2000);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});

describe('test deliveries, the deliveries list, redelivery', () => {
  it('POST /webhooks/{id}/test → 202 {delivery_id}: delivers {id, type: "webhook.test", channel: "webhooks", occurred_at, actor, data: {webhook_id}}', async () => {
    await withHook(['reviews.*'], async ({ id, secret, receiver }) => {
      const res = await call('POST', `/webhooks/${id}/test`);
      expect(res.statusCode).toBe(202);
      const accepted: object = res.json().data;
      expect(Object.keys(accepted)).toEqual(['delivery_id']);
      const deliveryId: string = res.json().data.delivery_id;
      const [got] = await receiver.waitFor(1);
      if (!got) throw new Error('nothing received');
      expect(got.headers['webhook-id']).toBe(deliveryId);
      const event = new Webhook(secret).verify(got.body, flat(got.headers));
      const parsed: { id: string } = JSON.parse(got.body);
      expect(Object.keys(parsed)).toEqual(['id', 'type', 'channel', 'occurred_at', 'actor', 'data']);
      expect(event).toMatchObject({ type: 'webhook.test', channel: 'webhooks', actor: ceo.username, data: { webhook_id: id } });
      const [listed] = await until(id, (list) => list[0]?.status === 'succeeded');
      expect(listed).toMatchObject({ id: deliveryId, event_type: 'webhook.test', event_id: parsed.id, attempts: 1 });
      expect((await ceo.caller.webhooks.test({ webhook_id: id })).delivery_id).not.toBe(deliveryId);
    });
  });

  it('deliveries: DeliveryResponse exactly, newest first, paginated, filtered by status', async () => {
    await withHook(['approvals.*'], async ({ id, receiver }) => {
      receiver.answers.push({ status: 410 });
      const first = (await call('POST', `/webhooks/${id}/test`)).json().data.delivery_id;
      await until(id, (list) => list[0]?.status === 'failed');
      await call('PATCH', `/webhooks/${id}`, { enabled: true });
      const second = (await call('POST', `/webhooks/${id}/test`)).json().data.delivery_id;
      const third = (await call('POST', `/webhooks/${id}/test`)).json().data.delivery_id;
      const all = await until(id, (list) => list.length === 3 && list.filter((d) => d.status === 'succeeded').length === 2);
      expect(all.map((d) => d.id)).toEqual([third, second, first]);
      expect(Object.keys(all[0] ?? {}).sort()).toEqual(
        ['attempts', 'created_at', 'error', 'event_id', 'event_type', 'id', 'last_attempt_at', 'next_attempt_at', 'response_status', 'status', 'succeeded_at', 'webhook_id'].sort(),
      );
      expect((await deliveries(id, '?status=failed')).map((d) => d.id)).toEqual([first]);
      expect((await deliveries(id, '?status=succeeded')).map((d) => d.id)).toEqual([third, second]);
      const page = await call('GET', `/webhooks/${id}/deliveries?limit=2`);
      expect(page.json().pagination).toMatchObject({ limit: 2, has_more: true });
      const cursor: string = page.json().pagination.next_cursor;
      const rest = await call('GET', `/webhooks/${id}/deliveries?limit=2&cursor=${encodeURIComponent(cursor)}`);
      const restItems: Delivery[] = rest.json().data;
      expect(restItems.map((d) => d.id)).toEqual([first]);
      expect((await call('GET', `/webhooks/${id}/deliveries?status=done`)).json()).toMatchObject({ error_code: 2001 });
      const tRpc = await ceo.caller.webhooks.deliveries({ webhook_id: id, status: 'failed' });
      expect(tRpc.items.map((d) => d.id)).toEqual([first]);
    });
  });

  it('redeliver → 202 with the same delivery id: one more attempt now, same webhook-id and body, attempts keep counting, whatever its status', async () => {
    await withHook(['approvals.*'], async ({ id, receiver }) => {
      await ceo.caller.approvals.create(APPROVAL);
      const [done] = await until(id, (list) => list[0]?.status === 'succeeded');
      if (!done) throw new Error('no delivery');
      receiver.answers.push({ status: 500 });
      const res = await call('POST', `/webhooks/${id}/deliveries/${done.id}/redeliver`);
      expect(res.statusCode).toBe(202);
      expect(res.json().data).toEqual({ delivery_id: done.id });
      const [first, second] = await receiver.waitFor(2);
      expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
      expect(second?.body).toBe(first?.body);
      // An ended delivery gets this one attempt only: a failure leaves it failed, with no retry.
      const [after] = await until(id, (list) => list[0]?.status === 'failed');
      expect(after).toMatchObject({ status: 'failed', error: 'HTTP 500' });
      await sleep(1500);
      expect(receiver.received).toHaveLength(2);
      await ceo.caller.webhooks.redeliver({ webhook_id: id, delivery_id: done.id });
      const [third] = await until(id, (list) => list[0]?.attempts === 3 && list[0].status === 'succeeded');
      expect(third?.id).toBe(done.id);
    });
  });

  it('redeliver of an unknown delivery, or one of another webhook → 404/3000', async () => {
    await withHook(['approvals.*'], async ({ id }) => {
      const res = await call('POST', `/webhooks/${id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error_code: 3000 });
      const theirs = (await call('POST', `/webhooks/${id}/test`)).json().data.delivery_id;
      await withHook(['approvals.*'], async (other) => {
        expect((await call('POST', `/webhooks/${other.id}/deliveries/${theirs}/redeliver`)).statusCode).toBe(404);
      });
    });
  });
});

describe('the destination is checked again at every attempt', () => {
  it('without WEBHOOK_ALLOW_PRIVATE an attempt to a loopback receiver fails with "destination not allowed" and nothing reaches it', async () => {
    // The webhook was made while private destinations were allowed; the instance that works it does not allow them.
    const maker = await startTestService({ env: ENV, jobTypes: [] });
    const strict = await startTestService({ env: { ...ENV, WEBHOOK_ALLOW_PRIVATE: 'false' }, databaseUrl: maker.databaseUrl });
    const receiver = await startReceiver();
    try {
      const boss = await createUser(maker, { role: 'ceo' });
      const hook: { id: string } = (await call('POST', '/webhooks', { url: receiver.url, event_types: ['approvals.*'] }, maker, boss)).json().data;
      await boss.caller.approvals.create(APPROVAL);
      const deadline = Date.now() + 10_000;
      let listed: Delivery[] = [];
      while (Date.now() < deadline) {
        listed = (await call('GET', `/webhooks/${hook.id}/deliveries`, undefined, maker, boss)).json().data;
        if (listed[0]?.error) break;
        await sleep(100);
      }
      expect(listed[0]).toMatchObject({ status: 'pending', attempts: 1, error: 'destination not allowed', response_status: null });
      expect(receiver.received).toHaveLength(0);
    } finally {
      await receiver.close();
      await strict.close();
      await maker.close();
    }
  });
});

describe('changes made outside the service', () => {
  it('an operator command (npm run admin) queues the deliveries of the events it records; a running instance delivers them', async () => {
    await withHook(['users.*'], async ({ receiver }) => {
      const user = await createUser(svc, { role: 'manager' });
      const root = path.resolve(import.meta.dirname, '..');
      const out = await new Promise<{ code: number; stderr: string }>((resolve) => {
        const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: svc.databaseUrl };
        execFile(path.join(root, 'node_modules', '.bin', 'node'), ['scripts/admin.ts', 'reset-password', user.username], { cwd: root, env, timeout: 60_000 }, (error, _stdout, stderr) =>
          resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stderr }),
        );
      });
      expect(out).toMatchObject({ code: 0 });
      const [got] = await receiver.waitFor(1);
      expect(got ? typeOf(got) : null).toBe('user.updated');
    });
  });
});

describe('the events purge', () => {
  it('keeps an event whose delivery has not gone out yet (its body is read then), and purges it once it has', async () => {
    const idle = await startTestService({ env: ENV, jobTypes: [] });
    const receiver = await startReceiver();
    try {
      const boss = await createUser(idle, { role: 'ceo' });
      await call('POST', '/webhooks', { url: receiver.url, event_types: ['approvals.*'] }, idle, boss);
      const approval = await boss.caller.approvals.create(APPROVAL);
      await idle.deps.events.publish();
      const db = kysely(idle.deps.orm.em.fork());
      const stored = async () => (await db.selectFrom('events').select('id').where('type', '=', 'approval.created').execute()).length;
      // Every event is past retention for this purge.
      const future = new Date(Date.now() + 60_000);
      await purgeEventsBefore(idle.deps.orm.em.fork(), future);
      expect(await stored()).toBe(1);
      const delivery = await db.selectFrom('webhook_deliveries').select(['id', 'attempts']).executeTakeFirstOrThrow();
      const { orm, clock, config, logger, metrics, jobs } = idle.deps;
      await runAttempt({ delivery_id: delivery.id, attempts: 0 }, { orm, clock, config, logger, metrics, jobs }, { id: '00000000-0000-4000-8000-0000000000d1' });
      const [got] = await receiver.waitFor(1);
      expect(got?.body).toContain(approval.id);
      await purgeEventsBefore(idle.deps.orm.em.fork(), future);
      expect(await stored()).toBe(0);
    } finally {
      await receiver.close();
      await idle.close();
    }
  });
});

/**
 * A test delivery queued on an instance that works no jobs, so the test runs its attempts by hand (as the
 * queue's workers on two instances would): the instance, its CEO, the webhook, the delivery's id and what
 * runAttempt takes; the receiver and the instance are closed after `work`.
 */
async function withUnworkedDelivery(
  work: (ctx: { idle: TestService; boss: TestUser; hookId: string; deliveryId: string; receiver: Receiver; env: Parameters<typeof runAttempt>[1] }) => Promise<void>,
): Promise<void> {
  const idle = await startTestService({ env: ENV, jobTypes: [] });
  const receiver = await startReceiver();
  try {
    const boss = await createUser(idle, { role: 'ceo' });
    const hook: { id: string } = (await call('POST', '/webhooks', { url: receiver.url, event_types: ['approvals.*'] }, idle, boss)).json().data;
    const accepted: { delivery_id: string } = (await call('POST', `/webhooks/${hook.id}/test`, undefined, idle, boss)).json().data;
    const { orm, clock, config, logger, metrics, jobs } = idle.deps;
    await work({ idle, boss, hookId: hook.id, deliveryId: accepted.delivery_id, receiver, env: { orm, clock, config, logger, metrics, jobs } });
  } finally {
    await receiver.close();
    await idle.close();
  }
}

describe('each attempt by exactly one job', () => {
  it('of two jobs for the same attempt one makes it; the job whose worker died makes it again; a stale job ends without one', async () => {
    await withUnworkedDelivery(async ({ idle, boss, hookId, deliveryId, receiver, env }) => {
      const payload = { delivery_id: deliveryId, attempts: 0 };
      const jobA = '00000000-0000-4000-8000-00000000000a';
      const jobB = '00000000-0000-4000-8000-00000000000b';
      await Promise.all([runAttempt(payload, env, { id: jobA }), runAttempt(payload, env, { id: jobB })]);
      expect(receiver.received).toHaveLength(1);
      // The winner's worker "died" before the queue saw it finish: the queue runs that job again, and it may attempt again.
      const row = await kysely(env.orm.em.fork()).selectFrom('webhook_deliveries').select('attemptJobId').where('id', '=', deliveryId).executeTakeFirstOrThrow();
      expect([jobA, jobB]).toContain(row.attemptJobId);
      await runAttempt(payload, env, { id: row.attemptJobId ?? '' });
      expect(receiver.received).toHaveLength(2);
      // A job queued for an attempt already made by another (a retry met by a redelivery) ends without one.
      await runAttempt(payload, env, { id: '00000000-0000-4000-8000-00000000000c' });
      expect(receiver.received).toHaveLength(2);
      const listed: Delivery[] = (await call('GET', `/webhooks/${hookId}/deliveries`, undefined, idle, boss)).json().data;
      const [delivery] = listed;
      expect(delivery).toMatchObject({ attempts: 2, status: 'succeeded' });
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([deliveryId]));
    });
  });
});

describe('an attempt made is not made again because its outcome could not be written at once', () => {
  it('a database failure while settling a successful attempt is retried in the run: one request at the receiver, the delivery succeeded', async () => {
    await withUnworkedDelivery(async ({ idle, boss, hookId, deliveryId, receiver, env }) => {
      const db = kysely(env.orm.em.fork());
      // The first write of the success fails, as a dropped connection would make it fail; later ones pass (a
      // sequence counts the writes: unlike a table, it keeps counting through the failed statement's rollback).
      await sql`create sequence settle_writes`.execute(db);
      await sql`create function fail_settle_once() returns trigger language plpgsql as $$
        begin
          if new.status = 'succeeded' and nextval('settle_writes') = 1 then
            raise exception 'settling refused once by the test';
          end if;
          return new;
        end $$`.execute(db);
      await sql`create trigger fail_settle_once before update on webhook_deliveries for each row execute function fail_settle_once()`.execute(db);
      await runAttempt({ delivery_id: deliveryId, attempts: 0 }, env, { id: '00000000-0000-4000-8000-00000000000d' });
      expect(receiver.received).toHaveLength(1);
      const listed: Delivery[] = (await call('GET', `/webhooks/${hookId}/deliveries`, undefined, idle, boss)).json().data;
      expect(listed[0]).toMatchObject({ id: deliveryId, attempts: 1, status: 'succeeded', response_status: 200 });
      expect((await sql<{ writes: number }>`select last_value as writes from settle_writes`.execute(db)).rows[0]?.writes).toBe(2);
    });
  });
});

describe('operations', () => {
  it('capabilities.webhooks is true', async () => {
    expect((await call('GET', '/capabilities')).json().data).toMatchObject({ webhooks: true });
  });

  it('metrics: attempts by result, deliveries by outcome, pending deliveries', async () => {
    await withHook(['approvals.*'], async ({ id }) => {
      await ceo.caller.approvals.create(APPROVAL);
      await until(id, (list) => list[0]?.status === 'succeeded');
      const text = (await svc.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(text).toMatch(/^agent_org_webhook_attempts_total\{result="success"\} [1-9]/m);
      expect(text).toMatch(/^agent_org_webhook_deliveries_total\{outcome="succeeded"\} [1-9]/m);
      expect(text).toMatch(/^agent_org_webhook_deliveries_pending \d+/m);
    });
  });

  it('housekeeping deletes deliveries older than 30 days and keeps younger ones', async () => {
    await withHook(['approvals.*'], async ({ id }) => {
      const old = (await call('POST', `/webhooks/${id}/test`)).json().data.delivery_id;
      const young = (await call('POST', `/webhooks/${id}/test`)).json().data.delivery_id;
      await until(id, (list) => list.length === 2 && list.every((d) => d.status === 'succeeded'));
      const db = kysely(svc.deps.orm.em.fork());
      await db.updateTable('webhook_deliveries').set({ createdAt: new Date(Date.now() - 31 * 24 * 3600 * 1000) }).where('id', '=', old).execute();
      await db.updateTable('webhook_deliveries').set({ createdAt: new Date(Date.now() - 29 * 24 * 3600 * 1000) }).where('id', '=', young).execute();
      const run = await svc.housekeeping.runNow();
      expect(run.failed).toEqual([]);
      expect((await deliveries(id)).map((d) => d.id)).toEqual([young]);
    });
  });

  it('deliveries queued while no instance works them survive a restart and go out once one does', async () => {
    const receiver = await startReceiver();
    const idle = await startTestService({ env: ENV, jobTypes: [] });
    let worker: TestService | null = null;
    try {
      const boss = await createUser(idle, { role: 'ceo' });
      await call('POST', '/webhooks', { url: receiver.url, event_types: ['approvals.*'] }, idle, boss);
      for (let i = 0; i < 5; i++) await boss.caller.approvals.create(APPROVAL);
      await idle.close();
      await sleep(300);
      expect(receiver.received).toHaveLength(0);
      worker = await startTestService({ env: ENV, databaseUrl: idle.databaseUrl });
      const got = await receiver.waitFor(5);
      expect(new Set(got.map((r: Received) => r.headers['webhook-id'])).size).toBe(5);
    } finally {
      await worker?.close();
      await receiver.close();
    }
  });

  it('two instances on one database: every delivery is made once', async () => {
    const other = await startTestService({ env: ENV, databaseUrl: svc.databaseUrl });
    try {
      await withHook(['approvals.*'], async ({ receiver }) => {
        await Promise.all(Array.from({ length: 30 }, () => ceo.caller.approvals.create(APPROVAL)));
        const got = await receiver.waitFor(30);
        await sleep(1000);
        expect(receiver.received).toHaveLength(30);
        expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(30);
        expect(new Set(got.map(idOf)).size).toBe(30);
      });
    } finally {
      await other.close();
    }
  });
});
