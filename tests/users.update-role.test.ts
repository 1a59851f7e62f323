import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { steppingClock, type TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

// A clock the test moves forward, so "updated_at changed" never depends on two calls landing in different milliseconds.
const { clock, tick } = steppingClock();

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo({ clock }));
});
afterAll(() => svc.close());

const patch = (userId: string, payload: unknown, headers: Record<string, string> = {}, user: TestUser = ceo) =>
  svc.app.inject({
    method: 'PATCH',
    url: `/api/v1/users/${userId}`,
    headers: { ...user.headers, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(payload),
  });

const getUser = (userId: string) => svc.app.inject({ method: 'GET', url: `/api/v1/users/${userId}`, headers: ceo.headers });

async function roleOf(userId: string): Promise<string | undefined> {
  const row = await kysely(svc.deps.orm.em.fork()).selectFrom('users').select('role').where('id', '=', userId).executeTakeFirst();
  return row?.role;
}

describe('PATCH /api/v1/users/{user_id}', () => {
  it("changes the user's role (200) and moves updated_at", async () => {
    const target = await createUser(svc, { role: 'observer' });
    const before = (await getUser(target.id)).json().data;
    tick();
    const res = await patch(target.id, { role: 'manager' });
    expect(res.statusCode).toBe(200);
    const after = res.json().data;
    expect(after).toMatchObject({ id: target.id, role: 'manager', created_at: before.created_at });
    expect(Date.parse(String(after.updated_at))).toBeGreaterThan(Date.parse(String(before.updated_at)));
    expect(res.headers.etag).toBe((await getUser(target.id)).headers.etag);
    expect(await roleOf(target.id)).toBe('manager');
  });

  it('setting the role the user already has is a 200 that changes nothing', async () => {
    const target = await createUser(svc, { role: 'board_member' });
    const before = (await getUser(target.id)).json().data;
    tick();
    const res = await patch(target.id, { role: 'board_member' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual(before);
  });

  it("refuses to change the CEO's role (409/4000)", async () => {
    const res = await patch(ceo.id, { role: 'manager' }, { accept: 'application/problem+json' });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json()).toMatchObject({ status: 409, error_code: 4000 });
    expect(await roleOf(ceo.id)).toBe('ceo');
  });

  it('refuses to make a second CEO (409/4000)', async () => {
    const target = await createUser(svc, { role: 'manager' });
    const res = await patch(target.id, { role: 'ceo' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail.error_code).toBe(4000);
    expect(await roleOf(target.id)).toBe('manager');
  });

  it('of concurrent promotions of different users to CEO none succeeds', async () => {
    const targets = await Promise.all([1, 2, 3, 4, 5].map(() => createUser(svc, { role: 'manager' })));
    const results = await Promise.all(targets.map((t) => patch(t.id, { role: 'ceo' })));
    expect(results.map((r) => r.statusCode)).toEqual([409, 409, 409, 409, 409]);
    const row = await kysely(svc.deps.orm.em.fork()).selectFrom('users').select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n')).where('role', '=', 'ceo').executeTakeFirstOrThrow();
    expect(row.n).toBe(1);
  });

  describe('If-Match', () => {
    it("is honoured with the GET's ETag (200) and refused when stale (409/4002), writing nothing", async () => {
      const target = await createUser(svc, { role: 'observer' });
      const etag = (await getUser(target.id)).headers.etag!;
      tick();
      const ok = await patch(target.id, { role: 'pair_programmer' }, { 'if-match': etag });
      expect(ok.statusCode).toBe(200);
      const stale = await patch(target.id, { role: 'manager' }, { 'if-match': etag });
      expect(stale.statusCode).toBe(409);
      expect(stale.json().error_detail.error_code).toBe(4002);
      expect(await roleOf(target.id)).toBe('pair_programmer');
    });

    it('goes stale when an org role is granted, since the representation changed', async () => {
      const target = await createUser(svc, { role: 'observer' });
      const etag = (await getUser(target.id)).headers.etag!;
      tick();
      await ceo.caller.users.grantOrgRole({ user_id: target.id, role: 'editor' });
      const res = await patch(target.id, { role: 'manager' }, { 'if-match': etag });
      expect(res.statusCode).toBe(409);
      expect(res.json().error_detail.error_code).toBe(4002);
    });

    it('accepts * and a list that contains the current tag', async () => {
      const target = await createUser(svc, { role: 'observer' });
      const etag = (await getUser(target.id)).headers.etag!;
      expect((await patch(target.id, { role: 'manager' }, { 'if-match': `"nope", ${etag}` })).statusCode).toBe(200);
      expect((await patch(target.id, { role: 'observer' }, { 'if-match': '*' })).statusCode).toBe(200);
    });

    it('of two concurrent updates with the same ETag exactly one wins; the other gets 409/4002', async () => {
      for (let round = 0; round < 3; round++) {
        const target = await createUser(svc, { role: 'observer' });
        const etag = (await getUser(target.id)).headers.etag!;
        tick();
        const results = await Promise.all([
          patch(target.id, { role: 'manager' }, { 'if-match': etag }),
          patch(target.id, { role: 'board_member' }, { 'if-match': etag }),
        ]);
        const statuses = results.map((r) => r.statusCode).sort();
        expect(statuses).toEqual([200, 409]);
        const loser = results.find((r) => r.statusCode === 409)!;
        expect(loser.json().error_detail.error_code).toBe(4002);
        const winner = results.find((r) => r.statusCode === 200)!;
        expect(await roleOf(target.id)).toBe(winner.json().data.role);
      }
    });
  });

  it('is 404/3000 for an unknown user and 400/2001 for a 129-character id', async () => {
    const missing = await patch(randomUUID(), { role: 'manager' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error_detail.error_code).toBe(3000);
    const long = await patch('x'.repeat(129), { role: 'manager' });
    expect(long.statusCode).toBe(400);
    expect(long.json().error_detail.error_code).toBe(2001);
  });

  it.each([
    ['an empty body', {}, /body\.role: must be one of/],
    ['an unknown role', { role: 'admin' }, /body\.role: must be one of/],
    ['a mass-assigned field', { role: 'manager', must_change_password: false }, /body: unknown field must_change_password/],
    ['the id in the body', { role: 'manager', id: randomUUID() }, /body: unknown field id/],
    ['the path parameter in the body', { role: 'manager', user_id: randomUUID() }, /body: unknown field user_id/],
  ])('refuses %s with 400/2001', async (_name, payload, detail) => {
    const target = await createUser(svc, { role: 'observer' });
    const res = await patch(target.id, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail.error_code).toBe(2001);
    expect(res.json().error).toMatch(detail);
    expect(await roleOf(target.id)).toBe('observer');
  });

  it('is for the CEO only (403/1001)', async () => {
    const manager = await createUser(svc, { role: 'manager' });
    const target = await createUser(svc, { role: 'observer' });
    const res = await patch(target.id, { role: 'board_member' }, {}, manager);
    expect(res.statusCode).toBe(403);
    expect(res.json().error_detail.error_code).toBe(1001);
    await expect(manager.caller.users.updateRole({ user_id: target.id, role: 'board_member' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await roleOf(target.id)).toBe('observer');
  });

  it("takes effect on the user's next request, in the same session (roles are read fresh)", async () => {
    const target = await createUser(svc, { role: 'observer' });
    const me = () => svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: target.headers });
    expect((await me()).json().data.role).toBe('observer');
    await ceo.caller.users.updateRole({ user_id: target.id, role: 'manager' });
    expect((await me()).json().data.role).toBe('manager');
  });
});
