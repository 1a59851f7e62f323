// Webhook management (CONTRACT §4.12): /webhooks and webhooks.* — fields, the secret shown once, who may, the cap, event types, URL rules, the SSRF check at create and update.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { issueKey } from './helpers/apiKeys.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

// No job runs in this file: nothing it queues is ever attempted, so the public-looking addresses below are never contacted.
let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' }, jobTypes: [] });
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

/** TEST-NET-1 (RFC 5737): an address that is not private, never routed, and never connected to here. */
const PUBLIC_URL = 'https://192.0.2.10/hooks/agent-org';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, body?: unknown, headers: Record<string, string> = ceo.headers) =>
  svc.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: { ...headers, ...PROBLEM, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });

const WEBHOOK_FIELDS = ['created_at', 'created_by', 'description', 'disabled_reason', 'enabled', 'event_types', 'id', 'updated_at', 'url'];

async function createWebhook(body: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
  const res = await call('POST', '/webhooks', { url: PUBLIC_URL, event_types: ['approvals.*'], ...body });
  expect(res.statusCode).toBe(201);
  const created: { id: string; secret: string } = res.json().data;
  return created;
}

describe('POST /webhooks', () => {
  it('creates a webhook: 201, Location, WebhookResponse plus the secret (whsec_ + base64 of 32 random bytes)', async () => {
    const res = await call('POST', '/webhooks', { url: PUBLIC_URL, event_types: ['approval.approved', 'users.*'], description: 'chat relay' });
    expect(res.statusCode).toBe(201);
    const webhook: Record<string, unknown> & { id: string; secret: string } = res.json().data;
    expect(Object.keys(webhook).sort()).toEqual([...WEBHOOK_FIELDS, 'secret'].sort());
    expect(webhook).toMatchObject({
      url: PUBLIC_URL,
      event_types: ['approval.approved', 'users.*'],
      description: 'chat relay',
      enabled: true,
      disabled_reason: null,
      created_by: ceo.username,
    });
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(webhook.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(res.headers.location).toBe(`/api/v1/webhooks/${webhook.id}`);
  });

  it('enabled defaults to true and may be false; description defaults to null', async () => {
    const off = await createWebhook({ enabled: false });
    const got = await call('GET', `/webhooks/${off.id}`);
    expect(got.json().data).toMatchObject({ enabled: false, description: null, disabled_reason: null });
  });

  it('the secret is shown once: GET and the list never carry it', async () => {
    const webhook = await createWebhook();
    for (const res of [await call('GET', `/webhooks/${webhook.id}`), await call('GET', '/webhooks?limit=200')]) {
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain(webhook.secret);
      expect(res.body).not.toContain('"secret"');
    }
    const fields: object = (await call('GET', `/webhooks/${webhook.id}`)).json().data;
    expect(Object.keys(fields).sort()).toEqual(WEBHOOK_FIELDS);
  });

  it.each([
    ['the private sessions channel', ['sessions.*']],
    ['a private event type', ['session.revoked']],
    ['an unknown event type', ['approval.exploded']],
    ['an unknown channel', ['payments.*']],
    ['a repeated type', ['approval.created', 'approval.created']],
    ['no type at all', []],
  ])('event_types with %s → 400/2001', async (_name, eventTypes) => {
    const res = await call('POST', '/webhooks', { url: PUBLIC_URL, event_types: eventTypes });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error_code: 2001 });
    expect(res.json().detail).toContain('body.event_types');
  });

  it.each([
    ['another scheme', 'ftp://192.0.2.10/hook'],
    ['not a URL', 'hooks here please'],
    ['a user name and password', 'https://user:pw@192.0.2.10/hook'],
    ['a user name alone', 'https://user@192.0.2.10/hook'],
    ['more than 2048 characters', `https://192.0.2.10/${'a'.repeat(2048)}`],
  ])('a URL with %s → 400/2001', async (_name, url) => {
    const res = await call('POST', '/webhooks', { url, event_types: ['approvals.*'] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error_code: 2001 });
    expect(res.json().detail).toContain('body.url');
  });

  it('a URL of exactly 2048 characters is accepted', async () => {
    const url = `https://192.0.2.10/${'a'.repeat(2048 - 'https://192.0.2.10/'.length)}`;
    expect(url).toHaveLength(2048);
    const res = await call('POST', '/webhooks', { url, event_types: ['approvals.*'] });
    expect(res.statusCode).toBe(201);
    await call('DELETE', `/webhooks/${res.json().data.id}`);
  });

  it.each([
    'http://127.0.0.1/hook',
    'http://localhost:8080/hook',
    'http://[::1]/hook',
    'http://10.0.0.5/hook',
    'http://172.20.1.1/hook',
    'http://192.168.0.10/hook',
    'http://100.64.0.1/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://0.0.0.0/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[fd00::1]/hook',
    'http://[fe80::1]/hook',
  ])('a destination that is or resolves to a refused address (%s) → 400/2000 "webhook destination not allowed"', async (url) => {
    const res = await call('POST', '/webhooks', { url, event_types: ['approvals.*'] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error_code: 2000, detail: 'webhook destination not allowed' });
  });

  it('records webhook.created in the audit log, without the secret', async () => {
    const webhook = await createWebhook({ description: 'audited' });
    const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('audit_entries').selectAll().where('targetId', '=', webhook.id).execute();
    expect(rows.map((r) => r.type)).toEqual(['webhook.created']);
    expect(rows[0]).toMatchObject({ actor: ceo.username, targetType: 'webhook' });
    expect(JSON.stringify(rows[0]?.data)).not.toContain(webhook.secret.slice(6));
  });
});

describe('at most 20 webhooks', () => {
  it('the 21st → 409/4000, also when created concurrently', async () => {
    const own = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' }, jobTypes: [] });
    try {
      const boss = await createUser(own, { role: 'ceo' });
      const results = await Promise.allSettled(
        Array.from({ length: 25 }, () => boss.caller.webhooks.create({ url: PUBLIC_URL, event_types: ['users.*'] })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(20);
      const res = await own.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: { ...boss.headers, ...PROBLEM, 'content-type': 'application/json' },
        payload: JSON.stringify({ url: PUBLIC_URL, event_types: ['users.*'] }),
      });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ error_code: 4000 });
    } finally {
      await own.close();
    }
  });
});

describe('rate limits (CONTRACT §5)', () => {
  it('webhooks.rotate_secret and webhooks.test allow 20 calls a minute per user; the 21st → 429/5001', async () => {
    const limited = await startTestService({ jobTypes: [] });
    try {
      const boss = await createUser(limited, { role: 'ceo' });
      const created = await boss.caller.webhooks.create({ url: PUBLIC_URL, event_types: ['users.*'] });
      for (const path of ['rotate-secret', 'test']) {
        const send = () =>
          limited.app.inject({ method: 'POST', url: `/api/v1/webhooks/${created.id}/${path}`, headers: { ...boss.headers, ...PROBLEM } });
        for (let i = 0; i < 20; i++) expect((await send()).statusCode).toBeLessThan(300);
        const refused = await send();
        expect(refused.statusCode).toBe(429);
        expect(refused.json()).toMatchObject({ error_code: 5001 });
        expect(refused.headers['ratelimit-limit']).toBe('20');
      }
    } finally {
      await limited.close();
    }
  });
});

describe('who may', () => {
  it.each(['manager', 'board_member', 'observer'] as const)('a %s → 403/1001 on every operation', async (role) => {
    const user = await createUser(svc, { role });
    const webhook = await createWebhook();
    const attempts = [
      call('POST', '/webhooks', { url: PUBLIC_URL, event_types: ['approvals.*'] }, user.headers),
      call('GET', '/webhooks', undefined, user.headers),
      call('GET', `/webhooks/${webhook.id}`, undefined, user.headers),
      call('PATCH', `/webhooks/${webhook.id}`, { enabled: false }, user.headers),
      call('DELETE', `/webhooks/${webhook.id}`, undefined, user.headers),
      call('POST', `/webhooks/${webhook.id}/rotate-secret`, undefined, user.headers),
      call('POST', `/webhooks/${webhook.id}/test`, undefined, user.headers),
      call('GET', `/webhooks/${webhook.id}/deliveries`, undefined, user.headers),
      call('POST', `/webhooks/${webhook.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`, undefined, user.headers),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error_code: 1001 });
    }
    await expect(user.caller.webhooks.list({})).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await call('DELETE', `/webhooks/${webhook.id}`);
  });

  it("the CEO's own API key → 403/1001 not available to API keys", async () => {
    const key = await issueKey(svc, ceo, ['approvals:read', 'users:read', 'setup:read', 'events:read']);
    const res = await call('GET', '/webhooks', undefined, key.headers);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error_code: 1001, detail: 'not available to API keys' });
    const created = await call('POST', '/webhooks', { url: PUBLIC_URL, event_types: ['approvals.*'] }, key.headers);
    expect(created.statusCode).toBe(403);
  });
});

describe('GET /webhooks', () => {
  it('lists newest first with keyset pagination', async () => {
    const a = await createWebhook();
    const b = await createWebhook();
    const first = await call('GET', '/webhooks?limit=1');
    expect(first.statusCode).toBe(200);
    const firstPage: { id: string }[] = first.json().data;
    expect(firstPage.map((w) => w.id)).toEqual([b.id]);
    expect(first.json().pagination).toMatchObject({ limit: 1, has_more: true });
    const cursor: string = first.json().pagination.next_cursor;
    const second = await call('GET', `/webhooks?limit=1&cursor=${encodeURIComponent(cursor)}`);
    const secondPage: { id: string }[] = second.json().data;
    expect(secondPage.map((w) => w.id)).toEqual([a.id]);
    await Promise.all([call('DELETE', `/webhooks/${a.id}`), call('DELETE', `/webhooks/${b.id}`)]);
  });

  it('an unknown id → 404/3000 (also a malformed one)', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await call('GET', `/webhooks/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error_code: 3000 });
    }
  });
});

describe('PATCH /webhooks/{webhook_id}', () => {
  it('changes the fields given and keeps the others; records webhook.updated', async () => {
    const webhook = await createWebhook({ description: 'before' });
    const res = await call('PATCH', `/webhooks/${webhook.id}`, { event_types: ['reviews.*', 'user.deleted'], description: null });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ url: PUBLIC_URL, event_types: ['reviews.*', 'user.deleted'], description: null, enabled: true });
    const types = await kysely(svc.deps.orm.em.fork()).selectFrom('audit_entries').select('type').where('targetId', '=', webhook.id).orderBy('id').execute();
    expect(types.map((t) => t.type)).toEqual(['webhook.created', 'webhook.updated']);
    await call('DELETE', `/webhooks/${webhook.id}`);
  });

  it('enabled: true clears disabled_reason and the count of consecutive failures', async () => {
    const webhook = await createWebhook();
    await kysely(svc.deps.orm.em.fork())
      .updateTable('webhooks')
      .set({ enabled: false, disabledReason: 'too many failed deliveries', consecutiveFailures: 20 })
      .where('id', '=', webhook.id)
      .execute();
    expect((await call('GET', `/webhooks/${webhook.id}`)).json().data).toMatchObject({ enabled: false, disabled_reason: 'too many failed deliveries' });
    const res = await call('PATCH', `/webhooks/${webhook.id}`, { enabled: true });
    expect(res.json().data).toMatchObject({ enabled: true, disabled_reason: null });
    const row = await kysely(svc.deps.orm.em.fork()).selectFrom('webhooks').select('consecutiveFailures').where('id', '=', webhook.id).executeTakeFirstOrThrow();
    expect(row.consecutiveFailures).toBe(0);
    await call('DELETE', `/webhooks/${webhook.id}`);
  });

  it('a new URL follows the same rules: a refused destination → 400/2000, credentials → 400/2001', async () => {
    const webhook = await createWebhook();
    const refused = await call('PATCH', `/webhooks/${webhook.id}`, { url: 'http://169.254.169.254/' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error_code: 2000, detail: 'webhook destination not allowed' });
    const credentials = await call('PATCH', `/webhooks/${webhook.id}`, { url: 'https://a:b@192.0.2.10/' });
    expect(credentials.json()).toMatchObject({ error_code: 2001 });
    expect((await call('PATCH', `/webhooks/${webhook.id}`, { event_types: ['sessions.*'] })).json()).toMatchObject({ error_code: 2001 });
    await call('DELETE', `/webhooks/${webhook.id}`);
  });
});

describe('DELETE, rotate-secret', () => {
  it('DELETE → 204 without a body, then 404; records webhook.deleted', async () => {
    const webhook = await createWebhook();
    const res = await call('DELETE', `/webhooks/${webhook.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await call('GET', `/webhooks/${webhook.id}`)).statusCode).toBe(404);
    expect((await call('DELETE', `/webhooks/${webhook.id}`)).statusCode).toBe(404);
    const types = await kysely(svc.deps.orm.em.fork()).selectFrom('audit_entries').select('type').where('targetId', '=', webhook.id).orderBy('id').execute();
    expect(types.map((t) => t.type)).toEqual(['webhook.created', 'webhook.deleted']);
  });

  it('rotate-secret → 200 {secret}: a new whsec_ secret, stored in place of the old one; records webhook.secret_rotated', async () => {
    const webhook = await createWebhook();
    const res = await call('POST', `/webhooks/${webhook.id}/rotate-secret`);
    expect(res.statusCode).toBe(200);
    const { secret } = res.json().data;
    const rotated: object = res.json().data;
    expect(Object.keys(rotated)).toEqual(['secret']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).not.toBe(webhook.secret);
    const row = await kysely(svc.deps.orm.em.fork()).selectFrom('webhooks').select('secret').where('id', '=', webhook.id).executeTakeFirstOrThrow();
    expect(row.secret).toBe(secret);
    const types = await kysely(svc.deps.orm.em.fork()).selectFrom('audit_entries').select('type').where('targetId', '=', webhook.id).orderBy('id').execute();
    expect(types.map((t) => t.type)).toEqual(['webhook.created', 'webhook.secret_rotated']);
    await call('DELETE', `/webhooks/${webhook.id}`);
  });
});

describe('through tRPC', () => {
  it('webhooks.{create, get, update, list, rotateSecret, delete} answer as REST does', async () => {
    const created = await ceo.caller.webhooks.create({ url: PUBLIC_URL, event_types: ['setup.*'] });
    expect(created.secret).toMatch(/^whsec_/);
    expect((await ceo.caller.webhooks.get({ webhook_id: created.id })).event_types).toEqual(['setup.*']);
    expect((await ceo.caller.webhooks.update({ webhook_id: created.id, enabled: false })).enabled).toBe(false);
    const page = await ceo.caller.webhooks.list({ limit: 200 });
    expect(page.items.map((w) => w.id)).toContain(created.id);
    expect((await ceo.caller.webhooks.rotateSecret({ webhook_id: created.id })).secret).not.toBe(created.secret);
    await ceo.caller.webhooks.delete({ webhook_id: created.id });
    await expect(ceo.caller.webhooks.get({ webhook_id: created.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
