// Service accounts (CONTRACT §3.5, §4.3 rev. 3): users that are programs, `kind` and `mfa_enabled` on the wire, GET /users?kind=.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { usernameKey, usernameSkeletonKey } from '../src/services/auth/usernameKeys.ts';
import { createServiceAccount } from './helpers/apiKeys.ts';
import { PROBLEM } from './helpers/http.ts';
import type { TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo());
});
afterAll(() => svc.close());

const PASSWORD = 'a perfectly fine password';

const post = (payload: unknown, user: TestUser = ceo) =>
  svc.app.inject({ method: 'POST', url: '/api/v1/users', headers: { ...user.headers, ...PROBLEM, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });

const botName = () => `bot_${randomUUID().slice(0, 8)}`;

describe('POST /users with kind: "service"', () => {
  it('creates a service account without a password: 201, kind service, must_change_password false, mfa_enabled false, Location', async () => {
    const res = await post({ username: botName(), role: 'pair_programmer', kind: 'service' });
    expect(res.statusCode).toBe(201);
    const user = res.json().data;
    expect(user).toMatchObject({ role: 'pair_programmer', kind: 'service', must_change_password: false, mfa_enabled: false, org_roles: [] });
    expect(res.headers.location).toBe(`/api/v1/users/${user.id}`);
    const row = await kysely(svc.deps.orm.em.fork()).selectFrom('users').select(['passwordHash', 'kind']).where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ passwordHash: null, kind: 'service' });
  });

  it('the same through createCaller (users.create)', async () => {
    const user = await ceo.caller.users.create({ username: botName(), role: 'observer', kind: 'service' });
    expect(user).toMatchObject({ kind: 'service', must_change_password: false, mfa_enabled: false });
  });

  it('kind defaults to "human", which still needs a password (must_change_password true)', async () => {
    const res = await post({ username: `h_${randomUUID().slice(0, 8)}`, password: PASSWORD, role: 'manager' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ kind: 'human', must_change_password: true, mfa_enabled: false });
  });

  it('a password with kind "service", or none for a human, is 400/2001 naming body.password; nothing is created', async () => {
    const withPassword = botName();
    const without = botName();
    const a = await post({ username: withPassword, password: PASSWORD, role: 'manager', kind: 'service' });
    const b = await post({ username: without, role: 'manager' });
    const c = await post({ username: without, role: 'manager', kind: 'human' });
    for (const res of [a, b, c]) {
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error_code: 2001 });
      expect(res.json().detail).toContain('body.password');
    }
    const named = await kysely(svc.deps.orm.em.fork()).selectFrom('users').select('id').where('usernameKey', 'in', [usernameKey(withPassword), usernameKey(without)]).execute();
    expect(named).toEqual([]);
  });

  it('an unknown kind is 400/2001', async () => {
    const res = await post({ username: botName(), role: 'manager', kind: 'robot' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error_code: 2001 });
  });

  it('role ceo is 409/4000, as for a human', async () => {
    const res = await post({ username: botName(), role: 'ceo', kind: 'service' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error_code: 4000 });
  });

  it('shares the namespace of usernames with people: a look-alike of a person is 409/4001', async () => {
    const person = await createUser(svc, { username: `Twin_${randomUUID().slice(0, 6)}` });
    const res = await post({ username: person.username.toUpperCase(), role: 'observer', kind: 'service' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error_code: 4001 });
  });

  it('only the CEO creates one (403/1001 for others)', async () => {
    const manager = await createUser(svc, { role: 'manager' });
    const res = await post({ username: botName(), role: 'observer', kind: 'service' }, manager);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error_code: 1001 });
  });

  it('its role can be changed and it can be deleted like any user', async () => {
    const bot = await createServiceAccount(ceo, 'observer');
    const patched = await svc.app.inject({ method: 'PATCH', url: `/api/v1/users/${bot.id}`, headers: ceo.headers, payload: { role: 'manager' } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data).toMatchObject({ role: 'manager', kind: 'service' });
    const deleted = await svc.app.inject({ method: 'DELETE', url: `/api/v1/users/${bot.id}`, headers: ceo.headers });
    expect(deleted.statusCode).toBe(204);
  });
});

describe('a service account cannot sign in', () => {
  const login = (username: string, password: string) =>
    svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: PROBLEM, payload: { username, password }, remoteAddress: `10.77.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` });
  const withoutInstance = (body: Record<string, unknown>) => ({ ...body, instance: undefined });

  it('its login answers exactly as a wrong password does (401/1000, same detail and body)', async () => {
    const bot = await createServiceAccount(ceo);
    const person = await createUser(svc);
    const asBot = await login(bot.username, PASSWORD);
    const wrong = await login(person.username, PASSWORD);
    expect(asBot.statusCode).toBe(401);
    expect(withoutInstance(asBot.json())).toEqual(withoutInstance(wrong.json()));
    expect(asBot.json()).toMatchObject({ error_code: 1000, detail: 'invalid username or password' });
    expect(asBot.headers['set-cookie']).toBeUndefined();
  });

  it('takes as long as a wrong password (the same argon2 work, so timing does not tell a program from a person)', async () => {
    const bot = await createServiceAccount(ceo);
    const person = await createUser(svc);
    const timed = async (username: string) => {
      const start = performance.now();
      expect((await login(username, PASSWORD)).statusCode).toBe(401);
      return performance.now() - start;
    };
    // Alternating, so load from other test files falls on both alike; medians of 7.
    const wrongTimes: number[] = [];
    const botTimes: number[] = [];
    for (let i = 0; i < 7; i++) {
      wrongTimes.push(await timed(person.username));
      botTimes.push(await timed(bot.username));
    }
    const median = (times: number[]) => times.sort((a, b) => a - b)[3] ?? 0;
    // Without the dummy verify, a program's refusal would take a small fraction of a wrong password's time.
    expect(median(botTimes)).toBeGreaterThan(median(wrongTimes) * 0.3);
  });
});

describe('kind and mfa_enabled on the wire', () => {
  it('UserResponse (GET /users/{id}) and UserInfoResponse (GET /auth/me) carry them', async () => {
    const person = await createUser(svc, { role: 'manager' });
    const got = await svc.app.inject({ method: 'GET', url: `/api/v1/users/${person.id}`, headers: ceo.headers });
    expect(got.json().data).toMatchObject({ kind: 'human', mfa_enabled: false });
    const me = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: person.headers });
    expect(me.json().data).toMatchObject({ kind: 'human', mfa_enabled: false });
    expect(me.json().data).not.toHaveProperty('api_key');
  });

  it('the user.created event carries them', async () => {
    const bot = await createServiceAccount(ceo);
    const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('events').select('data').where('type', '=', 'user.created').execute();
    expect(rows.map((r) => r.data)).toContainEqual(expect.objectContaining({ id: bot.id, kind: 'service', mfa_enabled: false, must_change_password: false }));
  });

  it('a user row written without a kind (as every user before this version) is a human', async () => {
    const id = randomUUID();
    const name = `old_${id.slice(0, 8)}`;
    const now = new Date();
    // Only the columns that existed before service accounts: the migration's default applies.
    await kysely(svc.deps.orm.em.fork())
      .insertInto('users')
      .values({ id, username: name, usernameKey: usernameKey(name), usernameSkeleton: usernameSkeletonKey(name), passwordHash: '$argon2id$placeholder', role: 'observer', mustChangePassword: false, temporaryPasswordSetAt: null, createdAt: now, updatedAt: now })
      .execute();
    const got = await svc.app.inject({ method: 'GET', url: `/api/v1/users/${id}`, headers: ceo.headers });
    expect(got.json().data).toMatchObject({ kind: 'human' });
  });

  it('the database refuses a service account with a password, and a person without one', async () => {
    const db = kysely(svc.deps.orm.em.fork());
    const row = (kind: 'human' | 'service', passwordHash: string | null) => {
      const name = `x_${randomUUID().slice(0, 8)}`;
      const now = new Date();
      return db
        .insertInto('users')
        .values({ id: randomUUID(), username: name, usernameKey: usernameKey(name), usernameSkeleton: usernameSkeletonKey(name), passwordHash, role: 'observer', kind, mustChangePassword: false, temporaryPasswordSetAt: null, createdAt: now, updatedAt: now })
        .execute();
    };
    await expect(row('service', '$argon2id$placeholder')).rejects.toThrow(/users_kind_password_check/);
    await expect(row('human', null)).rejects.toThrow(/users_kind_password_check/);
  });
});

describe('GET /users?kind=', () => {
  it('lists only users of that kind, in the usual order, paginated', async () => {
    const bots = [await createServiceAccount(ceo), await createServiceAccount(ceo), await createServiceAccount(ceo)];
    const services = await svc.app.inject({ method: 'GET', url: '/api/v1/users?kind=service&limit=200', headers: ceo.headers });
    expect(services.statusCode).toBe(200);
    const items: { id: string; kind: string }[] = services.json().data;
    expect(items.every((u) => u.kind === 'service')).toBe(true);
    expect(items.map((u) => u.id)).toEqual(expect.arrayContaining(bots.map((b) => b.id)));
    const humans: { kind: string; id: string }[] = (await svc.app.inject({ method: 'GET', url: '/api/v1/users?kind=human&limit=200', headers: ceo.headers })).json().data;
    expect(humans.every((u) => u.kind === 'human')).toBe(true);
    expect(humans.map((u) => u.id)).toContain(ceo.id);

    const first = await svc.app.inject({ method: 'GET', url: '/api/v1/users?kind=service&limit=1', headers: ceo.headers });
    const cursor: string = first.json().pagination.next_cursor;
    const second = await svc.app.inject({ method: 'GET', url: `/api/v1/users?kind=service&limit=200&cursor=${encodeURIComponent(cursor)}`, headers: ceo.headers });
    const paged = [...first.json().data, ...second.json().data].map((u: { id: string }) => u.id);
    expect(paged).toEqual(items.map((u) => u.id));
  });

  it('through createCaller too, and an unknown kind is 400/2001', async () => {
    const bot = await createServiceAccount(ceo);
    const page = await ceo.caller.users.list({ kind: 'service', limit: 200 });
    expect(page.items.map((u) => u.id)).toContain(bot.id);
    const bad = await svc.app.inject({ method: 'GET', url: '/api/v1/users?kind=robot', headers: { ...ceo.headers, ...PROBLEM } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error_code: 2001 });
  });
});
