// CONTRACT §2.5: Idempotency-Key on the creates a client may retry after a connection reset.
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migration20261127040000_idempotency_fingerprint_hmac } from '../src/db/migrations/Migration20261127040000_idempotency_fingerprint_hmac.ts';
import { kysely } from '../src/db/kysely.ts';
import { canonicalJson } from '../src/services/idempotency/idempotency.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
let manager: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo());
  manager = await createUser(svc, { role: 'manager' });
});
afterAll(() => svc.close());

const approval = (title = `deploy ${randomUUID()}`) => ({ action_type: 'deploy:production', title, description: 'ship it', risk_level: 'low' as const });

function post(url: string, body: unknown, opts: { user?: TestUser; key?: string; service?: TestService; accept?: string } = {}) {
  const headers: Record<string, string> = { ...(opts.user ?? manager).headers, 'content-type': 'application/json' };
  if (opts.key !== undefined) headers['idempotency-key'] = opts.key;
  if (opts.accept) headers.accept = opts.accept;
  return (opts.service ?? svc).app.inject({ method: 'POST', url, headers, payload: JSON.stringify(body) });
}

async function approvalsTitled(title: string): Promise<number> {
  const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('approvals').select('id').where('title', '=', title).execute();
  return rows.length;
}

async function keyRows(userId: string, key: string): Promise<number> {
  const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('idempotency_keys').select('key').where('userId', '=', userId).where('key', '=', key).execute();
  return rows.length;
}

describe('a repeat with the same key and body', () => {
  it('gets the first status, body and Location again with Idempotent-Replayed: true, and creates nothing', async () => {
    const key = randomUUID();
    const body = approval();
    const first = await post('/api/v1/approvals', body, { key });
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post('/api/v1/approvals', body, { key });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(again.headers.location).toBe(first.headers.location);
    expect(await approvalsTitled(body.title)).toBe(1);
  });

  it('treats the body by its content: keys in another order are the same body', async () => {
    const key = randomUUID();
    const body = approval();
    const reordered = { risk_level: body.risk_level, description: body.description, title: body.title, action_type: body.action_type };
    expect((await post('/api/v1/approvals', body, { key })).statusCode).toBe(201);
    const again = await post('/api/v1/approvals', reordered, { key });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await approvalsTitled(body.title)).toBe(1);
  });

  it('is answered the same by another instance on the same database', async () => {
    const other = await startTestService({ databaseUrl: svc.databaseUrl, env: { RATE_LIMITS_ENABLED: 'false' } });
    try {
      const key = randomUUID();
      const body = approval();
      const first = await post('/api/v1/approvals', body, { key });
      const again = await post('/api/v1/approvals', body, { key, service: other });
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json().data.id).toBe(first.json().data.id);
    } finally {
      await other.close();
    }
  });

  it('works over tRPC (createCaller) too', async () => {
    const key = randomUUID();
    const body = approval();
    const caller = svc.caller({ bearerToken: manager.token, idempotencyKey: key });
    const first = await caller.approvals.create(body);
    const again = await caller.approvals.create(body);
    expect(again).toEqual(first);
    expect(await approvalsTitled(body.title)).toBe(1);
  });
});

describe('conflicts and refusals', () => {
  it('the same key with a different body is 409/4000 and creates nothing', async () => {
    const key = randomUUID();
    expect((await post('/api/v1/approvals', approval(), { key })).statusCode).toBe(201);
    const other = approval();
    const res = await post('/api/v1/approvals', other, { key, accept: 'application/problem+json' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error_code: 4000, error_category: 'conflict' });
    expect(await approvalsTitled(other.title)).toBe(0);
  });

  it('the same key on another operation is a different request (409/4000)', async () => {
    const key = randomUUID();
    expect((await post('/api/v1/approvals', approval(), { key })).statusCode).toBe(201);
    const res = await post(`/api/v1/reviews/task-${randomUUID()}/stages/build/decide`, { verdict: 'pass', reason: null }, { key });
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail.error_code).toBe(4000);
  });

  it('keys are per user: two users may use the same key for their own requests', async () => {
    const key = randomUUID();
    const mine = approval();
    const theirs = approval();
    expect((await post('/api/v1/approvals', mine, { key, user: manager })).statusCode).toBe(201);
    const res = await post('/api/v1/approvals', theirs, { key, user: ceo });
    expect(res.statusCode).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await approvalsTitled(theirs.title)).toBe(1);
  });

  for (const [label, key] of [
    ['longer than 255 characters', 'k'.repeat(256)],
    ['not printable ASCII', 'clé'],
    ['empty', ''],
  ] as const) {
    it(`a key ${label} is 400/2001 and creates nothing`, async () => {
      const body = approval();
      const res = await post('/api/v1/approvals', body, { key });
      expect(res.statusCode).toBe(400);
      expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
      expect(res.json().error).toMatch(/Idempotency-Key/);
      expect(await approvalsTitled(body.title)).toBe(0);
    });
  }

  it('without the header nothing changes: two identical posts make two approvals', async () => {
    const body = approval();
    expect((await post('/api/v1/approvals', body)).statusCode).toBe(201);
    expect((await post('/api/v1/approvals', body)).statusCode).toBe(201);
    expect(await approvalsTitled(body.title)).toBe(2);
  });
});

describe('failures and races', () => {
  it('a failed first request keeps nothing: the key is given back and a corrected retry runs', async () => {
    const key = randomUUID();
    const username = `dup_${randomUUID().slice(0, 8)}`;
    expect((await post('/api/v1/users', { username, password: 'a perfectly fine password', role: 'observer' }, { user: ceo })).statusCode).toBe(201);
    const failed = await post('/api/v1/users', { username, password: 'a perfectly fine password', role: 'observer' }, { user: ceo, key });
    expect(failed.statusCode).toBe(409);
    expect(await keyRows(ceo.id, key)).toBe(0);
    const corrected = await post('/api/v1/users', { username: `${username}_2`, password: 'a perfectly fine password', role: 'observer' }, { user: ceo, key });
    expect(corrected.statusCode).toBe(201);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a stage decision replayed after it was taken answers 201 with the first decision, not 409/4001', async () => {
    const key = randomUUID();
    const url = `/api/v1/reviews/task-${randomUUID()}/stages/lint/decide`;
    const first = await post(url, { verdict: 'fail', reason: 'red' }, { key });
    expect(first.statusCode).toBe(201);
    const again = await post(url, { verdict: 'fail', reason: 'red' }, { key });
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
  });

  it('twenty concurrent requests with one key create exactly one approval; the others replay it or get 429/5002', async () => {
    const key = randomUUID();
    const body = approval();
    const responses = await Promise.all(Array.from({ length: 20 }, () => post('/api/v1/approvals', body, { key })));
    const created = responses.filter((r) => r.statusCode === 201);
    const busy = responses.filter((r) => r.statusCode === 429);
    expect(created.length + busy.length).toBe(20);
    expect(new Set(created.map((r) => r.json<{ data: { id: string } }>().data.id)).size).toBe(1);
    for (const r of busy) {
      expect(r.json().error_detail).toMatchObject({ error_code: 5002, retryable: true, retry_after: 1 });
      expect(r.headers['retry-after']).toBe('1');
    }
    expect(await approvalsTitled(body.title)).toBe(1);
  });

  it('setup.createAgent replays its first result instead of adding a second agent', async () => {
    const key = randomUUID();
    const provider = svc.deps.providers.providers[0];
    const model = provider?.models[0];
    expect(provider && model).toBeTruthy();
    const body = { name: `Agent ${randomUUID().slice(0, 6)}`, role: 'engineer', model_provider: provider?.name, model_id: model?.id };
    const first = await post('/api/v1/setup/agent', body, { user: ceo, key });
    expect(first.statusCode).toBe(201);
    const again = await post('/api/v1/setup/agent', body, { user: ceo, key });
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    const agents = await ceo.caller.setup.listAgents({ limit: 200 });
    expect(agents.items.filter((a) => a.name === body.name)).toHaveLength(1);
  });
});

describe('the stored fingerprint keeps no secret under a fast hash (CONTRACT §3.7)', () => {
  const body = { username: 'fingerprinted', password: 'a perfectly fine password', role: 'observer' };

  /** Creates the user with an Idempotency-Key on a service whose secret is `secret`, and reads the stored fingerprint. */
  async function fingerprintUnder(secret: string): Promise<string> {
    const service = await startTestService({ env: { APP_SECRET: secret, RATE_LIMITS_ENABLED: 'false' } });
    try {
      const chief = await createUser(service, { role: 'ceo' });
      const key = randomUUID();
      expect((await post('/api/v1/users', body, { user: chief, key, service })).statusCode).toBe(201);
      const row = await kysely(service.deps.orm.em.fork()).selectFrom('idempotency_keys').select('fingerprint').where('key', '=', key).executeTakeFirstOrThrow();
      return row.fingerprint;
    } finally {
      await service.close();
    }
  }

  it('is not a plain hash of the body: it depends on the server secret, so a dump alone cannot test password guesses', async () => {
    const [one, other] = await Promise.all([fingerprintUnder('a'.repeat(32)), fingerprintUnder('b'.repeat(32))]);
    expect(one).not.toBe(other);
    const plain = createHash('sha256').update('users.create\n').update(canonicalJson(body));
    expect([plain.copy().digest('hex'), plain.copy().digest('base64url')]).not.toContain(one);
    expect(one).not.toContain(body.password);
  });

  it('rows written under the old fingerprint are deleted by the migration; rows under the new one stay', async () => {
    const em = svc.deps.orm.em.fork();
    const old = randomUUID();
    const current = randomUUID();
    const row = (key: string, fingerprint: string) => ({
      userId: manager.id, key, operation: 'approvals.create', fingerprint, response: null,
      createdAt: new Date(), leaseUntil: new Date(), expiresAt: new Date(Date.now() + 3_600_000),
    });
    await kysely(em).insertInto('idempotency_keys').values([row(old, createHash('sha256').update('x').digest('hex')), row(current, 'A'.repeat(43))]).execute();
    const migration = new Migration20261127040000_idempotency_fingerprint_hmac(em.getDriver(), svc.deps.orm.config);
    migration.up();
    const queries = migration.getQueries().filter((query) => typeof query === 'string');
    expect(queries).toHaveLength(1);
    for (const query of queries) await em.getConnection().execute(query);
    expect(await keyRows(manager.id, old)).toBe(0);
    expect(await keyRows(manager.id, current)).toBe(1);
  });
});
