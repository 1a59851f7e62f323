// API-key management (CONTRACT §3.5): POST/GET/DELETE /api-keys and apiKeys.* — fields, secret, who may, caps, expiry rules, limits.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../src/contracts/apiKeys.ts';
import { kysely } from '../src/db/kysely.ts';
import { createServiceAccount, issueKey } from './helpers/apiKeys.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo());
});
afterAll(() => svc.close());

const DAY_MS = 24 * 3600 * 1000;
const inDays = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString();

type Call = { method: 'GET' | 'POST' | 'DELETE'; url: string; user: TestUser | { headers: Record<string, string> }; body?: unknown };
const call = ({ method, url, user, body }: Call) =>
  svc.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: { ...user.headers, ...PROBLEM, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
const create = (user: TestUser, body: unknown) => call({ method: 'POST', url: '/api-keys', user, body });
/** The ids of a page's keys, in order. */
function idsOf(res: Awaited<ReturnType<typeof call>>): string[] {
  const items: { id: string }[] = res.json().data;
  return items.map((k) => k.id);
}

const API_KEY_FIELDS = ['created_at', 'created_by', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at', 'scopes', 'user_id', 'username'];

describe('POST /api-keys', () => {
  it('issues a key for the caller: 201, Location, the ApiKeyResponse fields plus the secret (aok_ + 256 bits base64url, prefix its first 12 characters)', async () => {
    const user = await createUser(svc, { role: 'manager' });
    const res = await create(user, { name: 'ci runner', scopes: ['approvals:read', 'approvals:write'] });
    expect(res.statusCode).toBe(201);
    const key: Record<string, unknown> & { secret: string; prefix: string; id: string } = res.json().data;
    expect(Object.keys(key).sort()).toEqual([...API_KEY_FIELDS, 'secret'].sort());
    expect(key).toMatchObject({
      name: 'ci runner',
      user_id: user.id,
      username: user.username,
      scopes: ['approvals:read', 'approvals:write'],
      created_by: user.username,
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
    });
    expect(key.secret).toMatch(/^aok_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key.secret.slice(4), 'base64url')).toHaveLength(32);
    expect(key.prefix).toBe(key.secret.slice(0, 12));
    expect(res.headers.location).toBe(`/api/v1/api-keys/${key.id}`);
  });

  it('stores only the SHA-256 of the secret, never the secret itself', async () => {
    const user = await createUser(svc);
    const key = await issueKey(svc, user, ['users:read']);
    const row = await kysely(svc.deps.orm.em.fork()).selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(row.secretHash).toBe(createHash('sha256').update(key.secret).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(key.secret.slice(12));
  });

  it('the secret is shown once: GET and the list never carry it', async () => {
    const user = await createUser(svc);
    const key = await issueKey(svc, user, ['users:read']);
    const got = await call({ method: 'GET', url: `/api-keys/${key.id}`, user });
    const list = await call({ method: 'GET', url: '/api-keys', user });
    for (const res of [got, list]) {
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain(key.secret);
      expect(res.body).not.toContain('"secret"');
    }
    const fields: Record<string, unknown> = got.json().data;
    expect(Object.keys(fields).sort()).toEqual(API_KEY_FIELDS);
  });

  it('the CEO issues keys for any user, in particular a service account; created_by names the CEO', async () => {
    const bot = await createServiceAccount(ceo, 'pair_programmer');
    const res = await create(ceo, { name: 'agent runtime', scopes: ['approvals:write'], user_id: bot.id });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ user_id: bot.id, username: bot.username, created_by: ceo.username });
  });

  it("another user's id from anyone but the CEO is 403/1001; the caller's own id is fine", async () => {
    const user = await createUser(svc, { role: 'manager' });
    const other = await createUser(svc);
    const refused = await create(user, { name: 'k', scopes: ['users:read'], user_id: other.id });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error_code: 1001 });
    expect((await create(user, { name: 'k', scopes: ['users:read'], user_id: user.id })).statusCode).toBe(201);
  });

  it('an unknown user_id is 404/3000 (also one that is no uuid)', async () => {
    for (const userId of ['00000000-0000-4000-8000-000000000000', 'not-a-user']) {
      const res = await create(ceo, { name: 'k', scopes: ['users:read'], user_id: userId });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error_code: 3000 });
    }
  });

  it('expires_at in the future up to 365 days is kept; not in the future, or beyond 365 days, is 400/2000', async () => {
    const user = await createUser(svc);
    const ok = await create(user, { name: 'k', scopes: ['users:read'], expires_at: inDays(364) });
    expect(ok.statusCode).toBe(201);
    const expiresAt: string = ok.json().data.expires_at;
    expect(new Date(expiresAt).getTime()).toBeGreaterThan(Date.now() + 363 * DAY_MS);
    expect((await create(user, { name: 'k', scopes: ['users:read'], expires_at: null })).json().data.expires_at).toBeNull();
    for (const expires_at of [new Date(Date.now() - 1000).toISOString(), inDays(366)]) {
      const res = await create(user, { name: 'k', scopes: ['users:read'], expires_at });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error_code: 2000 });
    }
  });

  it('request shape: 1..100-character name, 1..9 distinct known scopes, a date-time, no unknown field (400/2001)', async () => {
    const user = await createUser(svc);
    const bad = [
      { name: '', scopes: ['users:read'] },
      { name: 'x'.repeat(101), scopes: ['users:read'] },
      { name: 'k', scopes: [] },
      { name: 'k', scopes: ['users:read', 'users:read'] },
      { name: 'k', scopes: ['users:write'] },
      { name: 'k', scopes: ['users:read'], expires_at: 'tomorrow' },
      { name: 'k', scopes: ['users:read'], role: 'ceo' },
    ];
    for (const body of bad) {
      const res = await create(user, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ error_code: 2001 });
    }
    expect((await create(user, { name: 'x'.repeat(100), scopes: [...SCOPES] })).statusCode).toBe(201);
  });

  it('at most 20 active keys per user (409/4000); revoked and expired ones do not count', async () => {
    const user = await createUser(svc);
    const keys = [];
    for (let i = 0; i < 20; i++) keys.push(await issueKey(svc, user, ['users:read']));
    const full = await create(user, { name: 'one too many', scopes: ['users:read'] });
    expect(full.statusCode).toBe(409);
    expect(full.json()).toMatchObject({ error_code: 4000 });
    // The CEO is held to the same cap for that user.
    expect((await create(ceo, { name: 'k', scopes: ['users:read'], user_id: user.id })).statusCode).toBe(409);
    const [first, second] = keys;
    await user.caller.apiKeys.revoke({ key_id: first!.id });
    expect((await create(user, { name: 'after a revocation', scopes: ['users:read'] })).statusCode).toBe(201);
    await kysely(svc.deps.orm.em.fork()).updateTable('api_keys').set({ expiresAt: new Date(Date.now() - 1000) }).where('id', '=', second!.id).execute();
    expect((await create(user, { name: 'after an expiry', scopes: ['users:read'] })).statusCode).toBe(201);
    expect((await create(user, { name: 'full again', scopes: ['users:read'] })).statusCode).toBe(409);
  });

  it('of concurrent issues beyond the cap, none gets past it', async () => {
    const user = await createUser(svc);
    for (let i = 0; i < 15; i++) await issueKey(svc, user, ['users:read']);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create(user, { name: `race ${String(i)}`, scopes: ['users:read'] })));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(5);
    expect(results.filter((r) => r.statusCode === 409)).toHaveLength(5);
  });
});

describe('GET /api-keys', () => {
  it("lists the caller's own keys only, newest first, paginated", async () => {
    const user = await createUser(svc);
    const other = await createUser(svc);
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(await issueKey(svc, user, ['users:read']));
    await issueKey(svc, other, ['users:read']);
    const first = await call({ method: 'GET', url: '/api-keys?limit=2', user });
    expect(first.statusCode).toBe(200);
    expect(first.json().pagination).toMatchObject({ limit: 2, has_more: true });
    const next: string = first.json().pagination.next_cursor;
    const rest = await call({ method: 'GET', url: `/api-keys?limit=2&cursor=${encodeURIComponent(next)}`, user });
    expect(rest.json().pagination).toEqual({ limit: 2, next_cursor: null, has_more: false });
    const ids = [...idsOf(first), ...idsOf(rest)];
    expect(ids).toEqual(mine.map((k) => k.id).reverse());
  });

  it("the CEO sees every user's keys and may filter by user_id; anyone else naming another user is 403/1001", async () => {
    const user = await createUser(svc);
    const bot = await createServiceAccount(ceo);
    const a = await issueKey(svc, user, ['users:read']);
    const b = await issueKey(svc, ceo, ['events:read'], { userId: bot.id });
    const all = await call({ method: 'GET', url: '/api-keys?limit=200', user: ceo });
    const allIds = idsOf(all);
    expect(allIds).toEqual(expect.arrayContaining([a.id, b.id]));
    const filtered = await call({ method: 'GET', url: `/api-keys?user_id=${bot.id}`, user: ceo });
    expect(idsOf(filtered)).toEqual([b.id]);
    expect((await call({ method: 'GET', url: `/api-keys?user_id=${bot.id}`, user })).statusCode).toBe(403);
    expect(idsOf(await call({ method: 'GET', url: `/api-keys?user_id=${user.id}`, user }))).toEqual([a.id]);
  });

  it('lists revoked keys too, with revoked_at', async () => {
    const user = await createUser(svc);
    const key = await issueKey(svc, user, ['users:read']);
    await user.caller.apiKeys.revoke({ key_id: key.id });
    const listed = (await user.caller.apiKeys.list({})).items;
    expect(listed).toHaveLength(1);
    expect(listed[0]?.revoked_at).toEqual(expect.any(String));
  });
});

describe('GET /api-keys/{key_id} and DELETE /api-keys/{key_id}', () => {
  it("own key or, for the CEO, any; another user's key is 404/3000 for both read and revoke", async () => {
    const owner = await createUser(svc);
    const stranger = await createUser(svc, { role: 'manager' });
    const key = await issueKey(svc, owner, ['users:read']);
    expect((await call({ method: 'GET', url: `/api-keys/${key.id}`, user: owner })).statusCode).toBe(200);
    expect((await call({ method: 'GET', url: `/api-keys/${key.id}`, user: ceo })).json().data).toMatchObject({ id: key.id, user_id: owner.id });
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await call({ method, url: `/api-keys/${key.id}`, user: stranger });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error_code: 3000 });
    }
    expect((await call({ method: 'GET', url: '/api-keys/not-a-key', user: owner })).statusCode).toBe(404);
    const after = await kysely(svc.deps.orm.em.fork()).selectFrom('api_keys').select('revokedAt').where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(after.revokedAt).toBeNull();
  });

  it('revoking answers 204 with no body, sets revoked_at, and is idempotent (revoked_at kept)', async () => {
    const user = await createUser(svc);
    const key = await issueKey(svc, user, ['users:read']);
    const first = await call({ method: 'DELETE', url: `/api-keys/${key.id}`, user });
    expect(first.statusCode).toBe(204);
    expect(first.body).toBe('');
    const revokedAt = (await user.caller.apiKeys.get({ key_id: key.id })).revoked_at;
    expect(revokedAt).toEqual(expect.any(String));
    expect((await call({ method: 'DELETE', url: `/api-keys/${key.id}`, user })).statusCode).toBe(204);
    expect((await user.caller.apiKeys.get({ key_id: key.id })).revoked_at).toBe(revokedAt);
  });

  it('the CEO revokes anyone\'s key', async () => {
    const user = await createUser(svc);
    const key = await issueKey(svc, user, ['users:read']);
    expect((await call({ method: 'DELETE', url: `/api-keys/${key.id}`, user: ceo })).statusCode).toBe(204);
    expect((await user.caller.apiKeys.get({ key_id: key.id })).revoked_at).not.toBeNull();
  });
});

describe('a key never manages keys', () => {
  it('creating, listing, reading or revoking keys with a key is 403/1001 "not available to API keys", and nothing changes', async () => {
    const user = await createUser(svc, { role: 'manager' });
    const key = await issueKey(svc, user, [...SCOPES]);
    const attempts: Call[] = [
      { method: 'POST', url: '/api-keys', user: key, body: { name: 'minted', scopes: ['users:read'] } },
      { method: 'GET', url: '/api-keys', user: key },
      { method: 'GET', url: `/api-keys/${key.id}`, user: key },
      { method: 'DELETE', url: `/api-keys/${key.id}`, user: key },
    ];
    for (const attempt of attempts) {
      const res = await call(attempt);
      expect(res.statusCode, `${attempt.method} ${attempt.url}`).toBe(403);
      expect(res.json()).toMatchObject({ error_code: 1001, detail: 'not available to API keys' });
    }
    const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('api_keys').select(['id', 'revokedAt']).where('userId', '=', user.id).execute();
    expect(rows).toEqual([{ id: key.id, revokedAt: null }]);
    await expect(key.caller.apiKeys.create({ name: 'minted', scopes: ['users:read'] })).rejects.toMatchObject({ message: 'not available to API keys' });
  });
});

describe('rate limits (CONTRACT §5): api_keys.create 10 / 60 s, api_keys.revoke 30 / 60 s per user', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({ env: { RATE_LIMIT_STORE: 'memory' } });
  });
  afterAll(() => limited.close());

  it('the 11th create within a minute is 429/5001 with RateLimit headers; the 31st revoke too', async () => {
    const user = await createUser(limited);
    const post = () => limited.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { ...user.headers, ...PROBLEM }, payload: { name: 'k', scopes: ['users:read'] } });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await post();
      expect(res.statusCode).toBe(201);
      expect(res.headers['ratelimit-limit']).toBe('10');
      const id: string = res.json().data.id;
      ids.push(id);
    }
    const refused = await post();
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error_code: 5001 });

    const revoke = (id: string) => limited.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers: { ...user.headers, ...PROBLEM } });
    for (let i = 0; i < 30; i++) {
      const res = await revoke(ids[i % ids.length]!);
      expect(res.statusCode).toBe(204);
      expect(res.headers['ratelimit-limit']).toBe('30');
    }
    const tooMany = await revoke(ids[0]!);
    expect(tooMany.statusCode).toBe(429);
    expect(tooMany.json()).toMatchObject({ error_code: 5001 });
  });
});
