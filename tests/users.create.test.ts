import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { usernameKey } from '../src/services/auth/usernameKeys.ts';
import type { TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo());
});
afterAll(() => svc.close());

const PASSWORD = 'a perfectly fine password';

const post = (payload: unknown, opts: { user?: TestUser | null; accept?: string } = {}) => {
  const user = opts.user === undefined ? ceo : opts.user;
  const headers: Record<string, string> = { ...(user ? user.headers : {}), ...(opts.accept ? { accept: opts.accept } : {}) };
  if (payload === undefined) return svc.app.inject({ method: 'POST', url: '/api/v1/users', headers });
  return svc.app.inject({ method: 'POST', url: '/api/v1/users', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
};

async function userCount(): Promise<number> {
  const row = await kysely(svc.deps.orm.em.fork()).selectFrom('users').select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n')).executeTakeFirstOrThrow();
  return row.n;
}

async function usersNamed(username: string): Promise<number> {
  const row = await kysely(svc.deps.orm.em.fork())
    .selectFrom('users')
    .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
    .where('usernameKey', '=', usernameKey(username))
    .executeTakeFirstOrThrow();
  return row.n;
}

describe('POST /api/v1/users', () => {
  it('creates a user (201, Location, must_change_password true) whom GET then finds', async () => {
    const res = await post({ username: 'Grace', password: PASSWORD, role: 'manager' });
    expect(res.statusCode).toBe(201);
    const user = res.json().data;
    expect(user).toMatchObject({ username: 'Grace', role: 'manager', must_change_password: true, org_roles: [], scoped_departments: [] });
    expect(user.created_at).toBe(user.updated_at);
    expect(res.headers.location).toBe(`/api/v1/users/${user.id}`);
    expect(res.body).not.toMatch(/argon2|password_hash|perfectly fine/);
    const fetched = await svc.app.inject({ method: 'GET', url: res.headers.location!, headers: ceo.headers });
    expect(fetched.json().data).toEqual(user);
    expect(res.headers.etag).toBe(fetched.headers.etag);
  });

  it('stores the username trimmed and NFC-normalised', async () => {
    const res = await post({ username: '  Zoe\u0308 ', password: PASSWORD, role: 'observer' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.username).toBe('Zo\u00eb');
  });

  it('refuses a username that differs only by case or normalisation (409/4001) and writes nothing', async () => {
    expect((await post({ username: 'Linus', password: PASSWORD, role: 'observer' })).statusCode).toBe(201);
    const count = await userCount();
    for (const username of ['linus', 'LINUS', ' Linus ']) {
      const res = await post({ username, password: PASSWORD, role: 'observer' }, { accept: 'application/problem+json' });
      expect(res.statusCode, username).toBe(409);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(res.json()).toMatchObject({ status: 409, error_code: 4001, error_category: 'conflict' });
    }
    expect((await post({ username: 'Ren\u00e9', password: PASSWORD, role: 'observer' })).statusCode).toBe(201);
    const decomposed = await post({ username: 'rene\u0301', password: PASSWORD, role: 'observer' });
    expect(decomposed.statusCode).toBe(409);
    expect(decomposed.json().error_detail.error_code).toBe(4001);
    expect(await userCount()).toBe(count + 1);
  });

  it('refuses role ceo (409/4000): there is one CEO only', async () => {
    const count = await userCount();
    const res = await post({ username: 'second_ceo', password: PASSWORD, role: 'ceo' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail).toMatchObject({ error_code: 4000 });
    expect(await userCount()).toBe(count);
  });

  it.each([
    ['id', { id: '00000000-0000-4000-8000-000000000000' }],
    ['created_at', { created_at: '2000-01-01T00:00:00.000Z' }],
    ['must_change_password', { must_change_password: false }],
    ['org_roles', { org_roles: ['owner'] }],
  ])('refuses mass assignment of %s (400/2001) and writes nothing', async (field, extra) => {
    const count = await userCount();
    const res = await post({ username: `mass_${field}`, password: PASSWORD, role: 'observer', ...extra }, { accept: 'application/problem+json' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error_code: 2001, detail: `body: unknown field ${field}` });
    expect(await userCount()).toBe(count);
  });

  it.each([
    ['an empty body', undefined, /body\.username: is required/],
    ['an empty object', {}, /body\.username: is required/],
    ['an unknown role', { username: 'x1', password: PASSWORD, role: 'admin' }, /body\.role: must be one of/],
    ['a 129-character username', { username: 'u'.repeat(129), password: PASSWORD, role: 'observer' }, /body\.username/],
    ['a username with a control character', { username: 'bad\u0007name', password: PASSWORD, role: 'observer' }, /body\.username/],
    ['an 11-character password', { username: 'x2', password: 'p'.repeat(11), role: 'observer' }, /body\.password: too short \(min 12\)/],
    ['a 129-character password', { username: 'x3', password: 'p'.repeat(129), role: 'observer' }, /body\.password: too long/],
    ['a JSON array', [], /body: must be a JSON object/],
  ])('refuses %s with 400/2001', async (_name, payload, detail) => {
    const count = await userCount();
    const res = await post(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail.error_code).toBe(2001);
    expect(res.json().error).toMatch(detail);
    expect(await userCount()).toBe(count);
  });

  it.each([
    ['a whitespace-only password', { username: 'ws_user', password: ' '.repeat(12), role: 'observer' }],
    ['a password equal to the username', { username: 'SameAsPassword', password: 'sameaspassword', role: 'observer' }],
  ])('refuses %s with 400/2000', async (_name, payload) => {
    const res = await post(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail.error_code).toBe(2000);
    expect(await usersNamed(payload.username.toLowerCase())).toBe(0);
  });

  it('is for the CEO only: another role gets 403/1001, no credentials 401/1000', async () => {
    const manager = await createUser(svc, { role: 'manager' });
    const forbidden = await post({ username: 'by_manager', password: PASSWORD, role: 'observer' }, { user: manager });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error_detail.error_code).toBe(1001);
    await expect(manager.caller.users.create({ username: 'by_manager', password: PASSWORD, role: 'observer' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const anonymous = await post({ username: 'by_nobody', password: PASSWORD, role: 'observer' }, { user: null });
    expect(anonymous.statusCode).toBe(401);
    expect(await usersNamed('by_manager')).toBe(0);
    expect(await usersNamed('by_nobody')).toBe(0);
  });

  it('of 20 concurrent creates of one username (in varying case) exactly one wins; the rest get 409/4001', async () => {
    const names = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 'RaceWinner' : 'racewinner'));
    const results = await Promise.all(names.map((username) => post({ username, password: PASSWORD, role: 'observer' })));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    for (const res of results.filter((r) => r.statusCode === 409)) expect(res.json().error_detail.error_code).toBe(4001);
    expect(await usersNamed('racewinner')).toBe(1);
  });
});
