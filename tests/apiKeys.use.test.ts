// Using an API key (CONTRACT §3.5): Authorization: Bearer aok_…, one actor for guards and limits, scopes before roles, 1000 vs 1002.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { SCOPES } from '../src/contracts/apiKeys.ts';
import { kysely } from '../src/db/kysely.ts';
import type { AppRouter } from '../src/routers/index.ts';
import { createServiceAccount, issueKey, type TestKey } from './helpers/apiKeys.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo());
});
afterAll(() => svc.close());

type Who = { headers: Record<string, string> };
const request = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, body?: unknown, service: TestService = svc) =>
  service.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: { ...who.headers, ...PROBLEM, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });

const APPROVAL = { action_type: 'deploy:production', title: 'ship it', description: 'release 1.2', risk_level: 'high' };

/** A service account of `role` holding a key with `scopes`. */
async function botKey(role: 'manager' | 'pair_programmer' | 'observer' | 'board_member', scopes: (typeof SCOPES)[number][]): Promise<TestKey & { username: string }> {
  const bot = await createServiceAccount(ceo, role);
  return { ...(await issueKey(svc, ceo, scopes, { userId: bot.id })), username: bot.username };
}

function expectProblem(res: { statusCode: number; json(): unknown }, status: number, code: number, detail?: string): void {
  expect(res.statusCode).toBe(status);
  expect(res.json()).toMatchObject({ status, error_code: code, ...(detail === undefined ? {} : { detail }) });
}

describe('a key acts as its user, narrowed by its scopes', () => {
  it('opens each operation of the scope table to a key holding its scope (REST)', async () => {
    const writer = await botKey('pair_programmer', ['approvals:write', 'approvals:read', 'reviews:write', 'reviews:read', 'users:read', 'setup:read']);
    const created = await request(writer, 'POST', '/approvals', APPROVAL);
    expect(created.statusCode).toBe(201);
    expect(created.json().data).toMatchObject({ requested_by: writer.username });
    const approvalId: string = created.json().data.id;
    expect((await request(writer, 'GET', '/approvals')).statusCode).toBe(200);
    expect((await request(writer, 'GET', `/approvals/${approvalId}`)).statusCode).toBe(200);
    expect((await request(writer, 'POST', '/reviews/task-1/stages/lint/decide', { verdict: 'pass', reason: null })).statusCode).toBe(201);
    expect((await request(writer, 'GET', '/reviews/task-1/stages')).statusCode).toBe(200);
    expect((await request(writer, 'GET', '/users')).statusCode).toBe(200);
    expect((await request(writer, 'GET', `/users/${ceo.id}`)).statusCode).toBe(200);
    for (const url of ['/setup/templates', '/setup/providers', '/setup/agents', '/setup/name-locales', '/setup/name-locales/available', '/setup/personality-presets']) {
      expect((await request(writer, 'GET', url)).statusCode, url).toBe(200);
    }
    const decider = await botKey('manager', ['approvals:decide']);
    const approved = await request(decider, 'POST', `/approvals/${approvalId}/approve`, { comment: null });
    expect(approved.statusCode).toBe(200);
    expect(approved.json().data).toMatchObject({ status: 'approved', decided_by: decider.username });
  });

  it('GET /auth/me and GET /capabilities need no scope; me carries api_key {id, name, prefix, scopes}', async () => {
    const key = await botKey('observer', ['users:read']);
    const me = await request(key, 'GET', '/auth/me');
    expect(me.statusCode).toBe(200);
    expect(me.json().data).toMatchObject({ id: key.userId, kind: 'service', role: 'observer', mfa_enabled: false });
    expect(me.json().data.api_key).toEqual({ id: key.id, name: expect.any(String), prefix: key.secret.slice(0, 12), scopes: ['users:read'] });
    const caps = await request(key, 'GET', '/capabilities');
    expect(caps.statusCode).toBe(200);
    expect(caps.json().data.api_keys).toBe(true);
    // Through createCaller: the same actor.
    expect((await key.caller.auth.me()).api_key?.id).toBe(key.id);
  });

  it('a missing scope is 403/1001 "the API key lacks the scope <scope>"', async () => {
    const key = await botKey('manager', ['users:read']);
    expectProblem(await request(key, 'GET', '/approvals'), 403, 1001, 'the API key lacks the scope approvals:read');
    expectProblem(await request(key, 'POST', '/approvals', APPROVAL), 403, 1001, 'the API key lacks the scope approvals:write');
    expectProblem(await request(key, 'GET', '/reviews/t/stages'), 403, 1001, 'the API key lacks the scope reviews:read');
    expectProblem(await request(key, 'POST', '/auth/ws-ticket'), 403, 1001, 'the API key lacks the scope events:read');
    await expect(key.caller.approvals.list({})).rejects.toMatchObject({ message: 'the API key lacks the scope approvals:read' });
  });

  it('every other operation answers a key with 403/1001 "not available to API keys", even a CEO key with every scope', async () => {
    const key = await issueKey(svc, ceo, [...SCOPES]);
    const victim = await createUser(svc);
    const attempts: [method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, body?: unknown][] = [
      ['POST', '/users', { username: `x_${randomBytes(3).toString('hex')}`, role: 'observer', kind: 'service' }],
      ['PATCH', `/users/${victim.id}`, { role: 'manager' }],
      ['DELETE', `/users/${victim.id}`],
      ['POST', `/users/${victim.id}/org-roles`, { role: 'viewer' }],
      ['DELETE', `/users/${victim.id}/org-roles/viewer`],
      ['POST', '/auth/change-password', { current_password: 'whatever password', new_password: 'another good password' }],
      ['GET', '/auth/sessions'],
      ['DELETE', `/auth/sessions/${victim.sessionId}`],
      ['POST', '/setup/company', { company_name: 'Acme' }],
      ['PUT', '/setup/name-locales', { locales: ['en_US'] }],
      ['POST', '/setup/complete'],
    ];
    for (const [method, url, body] of attempts) expectProblem(await request(key, method, url, body), 403, 1001, 'not available to API keys');
    // Nothing changed: the victim is still there, with the same role and a live session.
    const still = await request(ceo, 'GET', `/users/${victim.id}`);
    expect(still.json().data).toMatchObject({ role: 'observer', org_roles: [] });
    expect((await request(victim, 'GET', '/auth/me')).statusCode).toBe(200);
  });

  it('the scope is checked before the role, the input and the addressed resource', async () => {
    const observer = await botKey('observer', ['users:read']);
    // Scope first: not "insufficient permissions", not 400, not 404.
    expectProblem(await request(observer, 'POST', '/approvals', { bad: 'body' }), 403, 1001, 'the API key lacks the scope approvals:write');
    expectProblem(await request(observer, 'GET', '/approvals/no-such-approval'), 403, 1001, 'the API key lacks the scope approvals:read');
    // With the scope, the role check of §3.1 still applies.
    const scopedObserver = await botKey('observer', ['approvals:write']);
    expectProblem(await request(scopedObserver, 'POST', '/approvals', APPROVAL), 403, 1001, 'insufficient permissions');
  });

  it("the user's current role is read on every request: a role change applies to the next one", async () => {
    const key = await botKey('manager', ['approvals:write']);
    expect((await request(key, 'POST', '/approvals', APPROVAL)).statusCode).toBe(201);
    await ceo.caller.users.updateRole({ user_id: key.userId, role: 'observer' });
    expectProblem(await request(key, 'POST', '/approvals', APPROVAL), 403, 1001, 'insufficient permissions');
  });

  it('needs no CSRF token, and a key of a person who must still change the password works (that gate concerns sessions)', async () => {
    const pending = await createUser(svc, { role: 'manager', mustChangePassword: true });
    const key = await issueKey(svc, ceo, ['approvals:write', 'users:read'], { userId: pending.id });
    expectProblem(await request(pending, 'GET', '/users'), 403, 1001, 'password change required');
    expect((await request(key, 'GET', '/users')).statusCode).toBe(200);
    expect((await request(key, 'POST', '/approvals', APPROVAL)).statusCode).toBe(201);
    expect((await request(key, 'GET', '/auth/me')).json().data.must_change_password).toBe(true);
  });
});

describe('refused keys', () => {
  it('a malformed key (truncated, altered, too long) or an unknown one is 401/1000', async () => {
    const key = await botKey('observer', ['users:read']);
    const altered = key.secret.slice(0, -1) + (key.secret.endsWith('A') ? 'B' : 'A');
    const unknown = `aok_${randomBytes(32).toString('base64url')}`;
    for (const secret of [key.secret.slice(0, 20), altered, `${key.secret}x`, unknown, 'aok_']) {
      expectProblem(await request({ headers: { authorization: `Bearer ${secret}` } }, 'GET', '/users'), 401, 1000);
    }
    expect((await request(key, 'GET', '/users')).statusCode).toBe(200);
  });

  it('an expired key is 401/1000', async () => {
    const key = await botKey('observer', ['users:read']);
    await kysely(svc.deps.orm.em.fork()).updateTable('api_keys').set({ expiresAt: new Date(Date.now() - 1000) }).where('id', '=', key.id).execute();
    expectProblem(await request(key, 'GET', '/users'), 401, 1000);
  });

  it('a revoked key is 401/1002 from the next request on', async () => {
    const key = await botKey('observer', ['users:read']);
    expect((await request(key, 'GET', '/users')).statusCode).toBe(200);
    expect((await request(ceo, 'DELETE', `/api-keys/${key.id}`)).statusCode).toBe(204);
    expectProblem(await request(key, 'GET', '/users'), 401, 1002);
    expectProblem(await request(key, 'GET', '/auth/me'), 401, 1002);
  });

  it("deleting a user revokes its keys in the same transaction; the key then gets 401/1002", async () => {
    const key = await botKey('manager', ['users:read']);
    expect((await request(ceo, 'DELETE', `/users/${key.userId}`)).statusCode).toBe(204);
    const row = await kysely(svc.deps.orm.em.fork()).selectFrom('api_keys').select('revokedAt').where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(row.revokedAt).not.toBeNull();
    expectProblem(await request(key, 'GET', '/users'), 401, 1002);
  });

  it('a refused deletion revokes nothing (the keys go with the user or not at all)', async () => {
    const key = await issueKey(svc, ceo, ['users:read']);
    // The CEO cannot be deleted (409/4000): its key stays live.
    expect((await request(ceo, 'DELETE', `/users/${ceo.id}`)).statusCode).toBe(409);
    expect((await request(key, 'GET', '/users')).statusCode).toBe(200);
  });

  it('a key in the session cookie is no credential (401/1000), nor is one in the query string', async () => {
    const key = await botKey('observer', ['users:read']);
    const inCookie = await svc.app.inject({ method: 'GET', url: '/api/v1/users', headers: PROBLEM, cookies: { session: key.secret } });
    expectProblem(inCookie, 401, 1000);
    for (const name of ['api_key', 'access_token', 'key']) {
      const inQuery = await svc.app.inject({ method: 'GET', url: `/api/v1/users?${name}=${key.secret}`, headers: PROBLEM });
      expectProblem(inQuery, 401, 1000);
    }
  });
});

describe('what a key does not change', () => {
  it('logout with only a key answers 204 and revokes nothing: the key keeps working', async () => {
    const key = await botKey('observer', ['users:read']);
    const out = await request(key, 'POST', '/auth/logout');
    expect(out.statusCode).toBe(204);
    expect((await request(key, 'GET', '/users')).statusCode).toBe(200);
  });

  it('operations that need no credential ignore a key, even a revoked one', async () => {
    const key = await botKey('observer', ['users:read']);
    await ceo.caller.apiKeys.revoke({ key_id: key.id });
    expect((await request(key, 'GET', '/setup/status')).statusCode).toBe(200);
    expect((await request(key, 'GET', '/healthz')).statusCode).toBe(200);
    const person = await createUser(svc);
    const login = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: key.headers, payload: { username: person.username, password: person.password } });
    expect(login.statusCode).toBe(200);
  });

  it('a session cookie and a key: the valid cookie wins (and CSRF applies to it)', async () => {
    const person = await createUser(svc, { role: 'manager' });
    const key = await issueKey(svc, person, ['approvals:write']);
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/approvals', headers: { ...key.headers, ...PROBLEM }, cookies: { session: person.token }, payload: APPROVAL });
    expectProblem(res, 403, 1001, 'missing or invalid CSRF token');
  });
});

describe('last_used_at is written at most once a minute per key', () => {
  let clocked: TestService;
  let offsetMs = 0;
  beforeAll(async () => {
    clocked = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' }, clock: { now: () => new Date(Date.now() + offsetMs) } });
  });
  afterAll(() => clocked.close());

  it('the first use sets it, uses within the minute leave it, the first use after a minute moves it', async () => {
    const user = await createUser(clocked);
    const key = await issueKey(clocked, user, ['users:read']);
    const lastUsed = async () => (await user.caller.apiKeys.get({ key_id: key.id })).last_used_at;
    expect(await lastUsed()).toBeNull();
    expect((await request(key, 'GET', '/users', undefined, clocked)).statusCode).toBe(200);
    const first = await lastUsed();
    expect(first).toEqual(expect.any(String));
    offsetMs += 30_000;
    for (let i = 0; i < 3; i++) await request(key, 'GET', '/users', undefined, clocked);
    expect(await lastUsed()).toBe(first);
    offsetMs += 31_000;
    await request(key, 'GET', '/users', undefined, clocked);
    const moved = await lastUsed();
    expect(new Date(moved ?? 0).getTime() - new Date(first ?? 0).getTime()).toBeGreaterThanOrEqual(60_000);
  });
});

describe("rate limits count the key's user as the subject", () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({ env: { RATE_LIMIT_STORE: 'memory', RATE_LIMITS: JSON.stringify({ 'approvals.create': { limit: 2, window_s: 60 } }) } });
  });
  afterAll(() => limited.close());

  it("a user's session and its keys share one budget", async () => {
    const user = await createUser(limited, { role: 'manager' });
    const a = await issueKey(limited, user, ['approvals:write']);
    const b = await issueKey(limited, user, ['approvals:write']);
    expect((await request(user, 'POST', '/approvals', APPROVAL, limited)).statusCode).toBe(201);
    expect((await request(a, 'POST', '/approvals', APPROVAL, limited)).statusCode).toBe(201);
    expectProblem(await request(b, 'POST', '/approvals', APPROVAL, limited), 429, 5001);
    expectProblem(await request(user, 'POST', '/approvals', APPROVAL, limited), 429, 5001);
    // Another user's budget is untouched.
    const other = await createUser(limited, { role: 'manager' });
    expect((await request(other, 'POST', '/approvals', APPROVAL, limited)).statusCode).toBe(201);
  });
});

describe('tRPC over HTTP (/api/trpc) with a key', () => {
  it('authenticates queries and mutations by Authorization: Bearer, without cookies or a CSRF token', async () => {
    const address = await svc.app.listen({ port: 0, host: '127.0.0.1' });
    const key = await botKey('pair_programmer', ['approvals:write', 'users:read']);
    const client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${address}/api/trpc`, headers: key.headers })] });
    const me = await client.auth.me.query();
    expect(me.api_key?.id).toBe(key.id);
    const approval = await client.approvals.create.mutate({ action_type: 'deploy:staging', title: 't', description: 'd', risk_level: 'low' });
    expect(approval.requested_by).toBe(key.username);
    const refused = await client.users.create.mutate({ username: 'nope', role: 'observer', kind: 'service' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TRPCClientError);
    expect(refused instanceof TRPCClientError ? refused.data?.problem : null).toMatchObject({ status: 403, error_code: 1001, detail: 'not available to API keys' });
  });
});
