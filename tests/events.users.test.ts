// CONTRACT §4.8: every change of a user writes its users-channel event in its own transaction; data is the REST response.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { UserResponse } from '../src/contracts/users.ts';
import { listen, TestSocket, type LiveEventBody } from './helpers/events.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

let svc: TestService;
let base: string;
let ceo: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo());
  base = await listen(svc);
});
afterAll(() => svc.close());

/** A socket of a user of its own (every test its own, so the per-user stream cap and test order do not matter). */
async function watcher(channels: string[] = ['users']): Promise<TestSocket> {
  const socket = await TestSocket.open(base, await createUser(svc));
  expect((await socket.request({ type: 'subscribe', channels })).type).toBe('subscribed');
  return socket;
}

/** The next event about user `id`, skipping any other. */
async function nextAbout(socket: TestSocket, id: string): Promise<LiveEventBody> {
  for (;;) {
    const [event] = await socket.events(1);
    if (event && event.data.id === id) return event;
  }
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, user: TestUser, body?: unknown, headers: Record<string, string> = {}) =>
  svc.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: { ...user.headers, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });

const newName = () => `user_${randomBytes(4).toString('hex')}`;
const PASSWORD = 'a long enough password';

/** Every row of the outbox, published or not: a refused request must not add one. */
const outboxRows = async () => Number((await kysely(svc.deps.orm.em.fork()).selectFrom('events').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);

async function created(): Promise<UserResponse> {
  const res = await call('POST', '/users', ceo, { username: newName(), password: PASSWORD, role: 'observer' });
  expect(res.statusCode).toBe(201);
  return UserResponse.parse(res.json().data);
}

describe('POST /users → user.created', () => {
  it('carries the 201 body as data and the CEO as actor', async () => {
    const socket = await watcher();
    const res = await call('POST', '/users', ceo, { username: newName(), password: PASSWORD, role: 'manager' });
    expect(res.statusCode).toBe(201);
    const event = await nextAbout(socket, UserResponse.parse(res.json().data).id);
    expect(event).toMatchObject({ type: 'user.created', channel: 'users', actor: ceo.username });
    expect(event.data).toEqual(res.json().data);
    socket.close();
  });

  it('a refused creation (409 taken username, 403 not the CEO) writes no event', async () => {
    const taken = await created();
    const manager = await createUser(svc, { role: 'manager' });
    const socket = await watcher();
    const before = await outboxRows();
    expect((await call('POST', '/users', ceo, { username: taken.username.toUpperCase(), password: PASSWORD, role: 'observer' }, PROBLEM)).json()).toMatchObject({ status: 409, error_code: 4001 });
    expect((await call('POST', '/users', manager, { username: newName(), password: PASSWORD, role: 'observer' })).statusCode).toBe(403);
    expect(await outboxRows()).toBe(before);
    // The socket's next event is the next successful change: nothing came in between.
    const next = await created();
    expect((await socket.events(1))[0]).toMatchObject({ type: 'user.created', data: { id: next.id } });
    socket.close();
  });

  it('an Idempotency-Key replay answers the first response again and writes no second event', async () => {
    const key = `k-${randomBytes(8).toString('hex')}`;
    const body = { username: newName(), password: PASSWORD, role: 'observer' };
    const first = await call('POST', '/users', ceo, body, { 'idempotency-key': key });
    expect(first.statusCode).toBe(201);
    const before = await outboxRows();
    const again = await call('POST', '/users', ceo, body, { 'idempotency-key': key });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await outboxRows()).toBe(before);
  });
});

describe('first-run setup → user.created for the CEO', () => {
  it('data is the CEO as GET /users/{id} returns it, the CEO its own actor', async () => {
    const fresh = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
    try {
      const res = await fresh.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: { username: 'chief', password: 'correct horse battery staple' } });
      expect(res.statusCode).toBe(201);
      const { user } = res.json().data;
      const rows = await kysely(fresh.deps.orm.em.fork()).selectFrom('events').select(['type', 'actor', 'data']).execute();
      expect(rows).toHaveLength(1);
      const got = await fresh.app.inject({ method: 'GET', url: `/api/v1/users/${user.id}`, headers: { authorization: `Bearer ${res.cookies.find((c) => c.name === 'session')?.value ?? ''}` } });
      expect(rows[0]).toEqual({ type: 'user.created', actor: 'chief', data: got.json().data });
    } finally {
      await fresh.close();
    }
  });
});

describe('PATCH /users/{id} → user.updated', () => {
  it('a role change carries the 200 body as data', async () => {
    const user = await created();
    const socket = await watcher();
    const res = await call('PATCH', `/users/${user.id}`, ceo, { role: 'manager' });
    expect(res.statusCode).toBe(200);
    const event = await nextAbout(socket, user.id);
    expect(event).toMatchObject({ type: 'user.updated', actor: ceo.username });
    expect(event.data).toEqual(res.json().data);
    socket.close();
  });

  it('setting the role the user already has changes nothing and writes no event; refusals (409 the CEO, 403, 409 a stale If-Match) write none', async () => {
    const user = await created();
    const manager = await createUser(svc, { role: 'manager' });
    const before = await outboxRows();
    expect((await call('PATCH', `/users/${user.id}`, ceo, { role: 'observer' })).statusCode).toBe(200);
    expect((await call('PATCH', `/users/${ceo.id}`, ceo, { role: 'manager' })).statusCode).toBe(409);
    expect((await call('PATCH', `/users/${user.id}`, manager, { role: 'manager' })).statusCode).toBe(403);
    expect((await call('PATCH', `/users/${user.id}`, ceo, { role: 'manager' }, { 'if-match': '"stale"' })).statusCode).toBe(409);
    expect(await outboxRows()).toBe(before);
  });
});

describe('org roles → user.updated', () => {
  it('a grant carries the 201 body as data', async () => {
    const user = await created();
    const socket = await watcher();
    const res = await call('POST', `/users/${user.id}/org-roles`, ceo, { role: 'department_admin', scoped_departments: ['ops', 'eng'] });
    expect(res.statusCode).toBe(201);
    const event = await nextAbout(socket, user.id);
    expect(event).toMatchObject({ type: 'user.updated', actor: ceo.username });
    expect(event.data).toEqual(res.json().data);
    expect(event.data).toMatchObject({ org_roles: ['department_admin'], scoped_departments: ['eng', 'ops'] });
    socket.close();
  });

  it('a revocation (204) carries the user as GET /users/{id} returns it afterwards', async () => {
    const user = await created();
    expect((await call('POST', `/users/${user.id}/org-roles`, ceo, { role: 'editor' })).statusCode).toBe(201);
    const socket = await watcher();
    expect((await call('DELETE', `/users/${user.id}/org-roles/editor`, ceo)).statusCode).toBe(204);
    const event = await nextAbout(socket, user.id);
    expect(event).toMatchObject({ type: 'user.updated', actor: ceo.username, data: { org_roles: [] } });
    expect(event.data).toEqual((await call('GET', `/users/${user.id}`, ceo)).json().data);
    socket.close();
  });

  it('a refused grant (409 already held, 400 bad departments) or revocation (404 not held) writes no event', async () => {
    const user = await created();
    expect((await call('POST', `/users/${user.id}/org-roles`, ceo, { role: 'viewer' })).statusCode).toBe(201);
    const before = await outboxRows();
    expect((await call('POST', `/users/${user.id}/org-roles`, ceo, { role: 'viewer' })).statusCode).toBe(409);
    expect((await call('POST', `/users/${user.id}/org-roles`, ceo, { role: 'department_admin' })).statusCode).toBe(400);
    expect((await call('DELETE', `/users/${user.id}/org-roles/editor`, ceo)).statusCode).toBe(404);
    expect(await outboxRows()).toBe(before);
  });
});

describe('DELETE /users/{id} → user.deleted', () => {
  it('carries {id, username}, the CEO as actor; a bystander gets none of the deleted user\'s session.revoked events', async () => {
    const victim = await createUser(svc);
    const socket = await watcher(['users', 'sessions']);
    expect((await call('DELETE', `/users/${victim.id}`, ceo)).statusCode).toBe(204);
    const event = await nextAbout(socket, victim.id);
    expect(event).toMatchObject({ type: 'user.deleted', channel: 'users', actor: ceo.username });
    expect(event.data).toEqual({ id: victim.id, username: victim.username });
    // The next change reaches the bystander next: the victim's session.revoked went to the victim only.
    const next = await created();
    expect((await socket.events(1))[0]).toMatchObject({ type: 'user.created', data: { id: next.id } });
    socket.close();
  });

  it('refusals (409 self, 409 the CEO, 404 unknown) write no event', async () => {
    const before = await outboxRows();
    expect((await call('DELETE', `/users/${ceo.id}`, ceo)).statusCode).toBe(409);
    expect((await call('DELETE', '/users/00000000-0000-4000-8000-000000000000', ceo)).statusCode).toBe(404);
    expect(await outboxRows()).toBe(before);
  });
});

describe('must_change_password (part of UserResponse) → user.updated', () => {
  it('the first password change, which clears it, is a user.updated equal to GET /users/{id}; a later one is not', async () => {
    const user = await createUser(svc, { mustChangePassword: true });
    const socket = await watcher();
    const change = (current: string, next: string) =>
      svc.app.inject({ method: 'POST', url: '/api/v1/auth/change-password', headers: { authorization: `Bearer ${user.token}` }, payload: { current_password: current, new_password: next } });
    const first = await change(user.password, 'the first chosen passphrase');
    expect(first.statusCode).toBe(200);
    const event = await nextAbout(socket, user.id);
    expect(event).toMatchObject({ type: 'user.updated', actor: user.username, data: { must_change_password: false } });
    expect(event.data).toEqual((await call('GET', `/users/${user.id}`, ceo)).json().data);
    const token = first.cookies.find((c) => c.name === 'session')?.value ?? '';

    const before = await outboxRows();
    const second = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/change-password', headers: { authorization: `Bearer ${token}` }, payload: { current_password: 'the first chosen passphrase', new_password: 'the second chosen passphrase' } });
    expect(second.statusCode).toBe(200);
    // No other session to end, and the flag stays false: nothing to announce.
    expect(await outboxRows()).toBe(before);
    socket.close();
  });
});
