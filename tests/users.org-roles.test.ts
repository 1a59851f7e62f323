import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { steppingClock, type TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

const { clock, tick } = steppingClock();

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo({ clock }));
});
afterAll(() => svc.close());

const grant = (userId: string, payload: unknown, headers: Record<string, string> = {}, user: TestUser = ceo) =>
  svc.app.inject({
    method: 'POST',
    url: `/api/v1/users/${userId}/org-roles`,
    headers: { ...user.headers, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(payload),
  });

const revoke = (userId: string, role: string, headers: Record<string, string> = {}, user: TestUser = ceo) =>
  svc.app.inject({ method: 'DELETE', url: `/api/v1/users/${userId}/org-roles/${role}`, headers: { ...user.headers, ...headers } });

const getUser = (userId: string) => svc.app.inject({ method: 'GET', url: `/api/v1/users/${userId}`, headers: ceo.headers });

async function rowsOf(userId: string): Promise<{ role: string; scoped_departments: string[] }[]> {
  const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('user_org_roles').select(['role', 'scopedDepartments']).where('userId', '=', userId).orderBy('role').execute();
  return rows.map((r) => ({ role: r.role, scoped_departments: r.scopedDepartments }));
}

async function owners(): Promise<string[]> {
  const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('user_org_roles').select('userId').where('role', '=', 'owner').orderBy('userId').execute();
  return rows.map((r) => r.userId);
}

async function makeOnlyOwners(...users: TestUser[]): Promise<void> {
  await kysely(svc.deps.orm.em.fork()).deleteFrom('user_org_roles').where('role', '=', 'owner').execute();
  for (const user of users) await ceo.caller.users.grantOrgRole({ user_id: user.id, role: 'owner' });
}

describe('POST /api/v1/users/{user_id}/org-roles', () => {
  it('grants an org role (201 UserResponse) and moves updated_at', async () => {
    const target = await createUser(svc, { role: 'manager' });
    const before = (await getUser(target.id)).json().data;
    tick();
    const res = await grant(target.id, { role: 'editor' });
    expect(res.statusCode).toBe(201);
    const user = res.json().data;
    expect(user).toMatchObject({ id: target.id, role: 'manager', org_roles: ['editor'], scoped_departments: [] });
    expect(Date.parse(String(user.updated_at))).toBeGreaterThan(Date.parse(String(before.updated_at)));
    expect(user).toEqual((await getUser(target.id)).json().data);
    expect(await rowsOf(target.id)).toEqual([{ role: 'editor', scoped_departments: [] }]);
  });

  it('grants department_admin with its departments, trimmed, de-duplicated and sorted; null counts as none for other roles', async () => {
    const target = await createUser(svc, { role: 'manager' });
    const res = await grant(target.id, { role: 'department_admin', scoped_departments: [' research', 'engineering', 'research'] });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ org_roles: ['department_admin'], scoped_departments: ['engineering', 'research'] });
    const viewer = await grant(target.id, { role: 'viewer', scoped_departments: null });
    expect(viewer.statusCode).toBe(201);
    expect(viewer.json().data).toMatchObject({ org_roles: ['department_admin', 'viewer'], scoped_departments: ['engineering', 'research'] });
    const owner = await grant(target.id, { role: 'owner', scoped_departments: [] });
    expect(owner.statusCode).toBe(201);
  });

  it('refuses an org role already held (409/4001) without touching the user', async () => {
    const target = await createUser(svc, { role: 'manager' });
    expect((await grant(target.id, { role: 'viewer' })).statusCode).toBe(201);
    const before = (await getUser(target.id)).json().data;
    tick();
    const res = await grant(target.id, { role: 'viewer' }, { accept: 'application/problem+json' });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json()).toMatchObject({ status: 409, error_code: 4001 });
    expect((await getUser(target.id)).json().data).toEqual(before);
  });

  it('of 10 concurrent grants of one org role exactly one wins; the rest get 409/4001', async () => {
    const target = await createUser(svc, { role: 'manager' });
    const results = await Promise.all(Array.from({ length: 10 }, () => grant(target.id, { role: 'editor' })));
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(9);
    for (const res of results.filter((r) => r.statusCode === 409)) expect(res.json().error_detail.error_code).toBe(4001);
    expect(await rowsOf(target.id)).toHaveLength(1);
  });

  it.each([
    ['department_admin without departments', { role: 'department_admin' }],
    ['department_admin with an empty list', { role: 'department_admin', scoped_departments: [] }],
    ['editor with departments', { role: 'editor', scoped_departments: ['engineering'] }],
    ['owner with departments', { role: 'owner', scoped_departments: ['engineering'] }],
  ])('refuses %s (400/2000) and writes nothing', async (_name, payload) => {
    const target = await createUser(svc, { role: 'manager' });
    const before = (await getUser(target.id)).json().data;
    tick();
    const res = await grant(target.id, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail.error_code).toBe(2000);
    expect(await rowsOf(target.id)).toEqual([]);
    expect((await getUser(target.id)).json().data).toEqual(before);
  });

  it.each([
    ['an unknown org role', { role: 'superuser' }, /body\.role: must be one of owner, department_admin, editor, viewer/],
    ['a user role', { role: 'ceo' }, /body\.role/],
    ['an empty object', {}, /body\.role/],
    ['a mass-assigned field', { role: 'viewer', created_at: '2000-01-01T00:00:00.000Z' }, /body: unknown field created_at/],
    ['a blank department', { role: 'department_admin', scoped_departments: ['  '] }, /body\.scoped_departments\.0: too short/],
    ['a 129-character department', { role: 'department_admin', scoped_departments: ['d'.repeat(129)] }, /body\.scoped_departments\.0: too long/],
    ['departments that are not a list', { role: 'department_admin', scoped_departments: 'engineering' }, /body\.scoped_departments/],
  ])('refuses %s with 400/2001', async (_name, payload, detail) => {
    const target = await createUser(svc, { role: 'manager' });
    const res = await grant(target.id, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail.error_code).toBe(2001);
    expect(res.json().error).toMatch(detail);
    expect(await rowsOf(target.id)).toEqual([]);
  });

  it('refuses a missing body with 400/2001', async () => {
    const target = await createUser(svc, { role: 'manager' });
    const res = await svc.app.inject({ method: 'POST', url: `/api/v1/users/${target.id}/org-roles`, headers: ceo.headers });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail.error_code).toBe(2001);
  });

  it('is 404/3000 for an unknown user and writes nothing', async () => {
    const id = randomUUID();
    const res = await grant(id, { role: 'viewer' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error_detail.error_code).toBe(3000);
    expect(await rowsOf(id)).toEqual([]);
  });

  it('honours If-Match (stale → 409/4002, nothing written)', async () => {
    const target = await createUser(svc, { role: 'manager' });
    const etag = (await getUser(target.id)).headers.etag!;
    expect((await grant(target.id, { role: 'viewer' }, { 'if-match': etag })).statusCode).toBe(201);
    const stale = await grant(target.id, { role: 'editor' }, { 'if-match': etag });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error_detail.error_code).toBe(4002);
    expect((await rowsOf(target.id)).map((r) => r.role)).toEqual(['viewer']);
  });

  it('is for the CEO only (403/1001)', async () => {
    const manager = await createUser(svc, { role: 'manager' });
    const res = await grant(manager.id, { role: 'owner' }, {}, manager);
    expect(res.statusCode).toBe(403);
    expect(res.json().error_detail.error_code).toBe(1001);
    expect(await rowsOf(manager.id)).toEqual([]);
  });
});

describe('DELETE /api/v1/users/{user_id}/org-roles/{role}', () => {
  it('revokes a held org role (204, no body) and moves updated_at', async () => {
    const target = await createUser(svc, { role: 'manager' });
    await ceo.caller.users.grantOrgRole({ user_id: target.id, role: 'department_admin', scoped_departments: ['engineering'] });
    await ceo.caller.users.grantOrgRole({ user_id: target.id, role: 'viewer' });
    const before = (await getUser(target.id)).json().data;
    tick();
    const res = await revoke(target.id, 'department_admin');
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const after = (await getUser(target.id)).json().data;
    expect(after).toMatchObject({ org_roles: ['viewer'], scoped_departments: [] });
    expect(Date.parse(String(after.updated_at))).toBeGreaterThan(Date.parse(String(before.updated_at)));
  });

  it('is 404/3000 when the role is not held, or the user does not exist', async () => {
    const target = await createUser(svc, { role: 'manager' });
    for (const [id, role] of [
      [target.id, 'editor'],
      [target.id, 'owner'],
      [randomUUID(), 'viewer'],
    ] as const) {
      const res = await revoke(id, role, { accept: 'application/problem+json' });
      expect(res.statusCode, `${id} ${role}`).toBe(404);
      expect(res.json()).toMatchObject({ status: 404, error_code: 3000 });
    }
  });

  it.each(['superuser', 'ceo', 'OWNER', 'r'.repeat(129)])('refuses the non-org role %s in the path with 400/2001', async (role) => {
    const target = await createUser(svc, { role: 'manager' });
    const res = await revoke(target.id, role);
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail.error_code).toBe(2001);
    expect(res.json().error).toMatch(/^path\.role/);
  });

  it('refuses to remove the last owner (409/4000) and keeps the role', async () => {
    const owner = await createUser(svc, { role: 'manager' });
    await makeOnlyOwners(owner);
    const res = await revoke(owner.id, 'owner');
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail.error_code).toBe(4000);
    expect(res.json().error).toMatch(/last owner/);
    expect(await owners()).toEqual([owner.id]);
  });

  it('removes an owner while another owner remains', async () => {
    const [a, b] = await Promise.all([createUser(svc, { role: 'manager' }), createUser(svc, { role: 'manager' })]);
    await makeOnlyOwners(a, b);
    expect((await revoke(a.id, 'owner')).statusCode).toBe(204);
    expect(await owners()).toEqual([b.id]);
  });

  it('of concurrent revokes of the last two owners exactly one succeeds; the other gets 409/4000', async () => {
    for (let round = 0; round < 5; round++) {
      const [a, b] = await Promise.all([createUser(svc, { role: 'manager' }), createUser(svc, { role: 'manager' })]);
      await makeOnlyOwners(a, b);
      const results = await Promise.all([revoke(a.id, 'owner'), revoke(b.id, 'owner')]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([204, 409]);
      expect(results.find((r) => r.statusCode === 409)!.json().error_detail.error_code).toBe(4000);
      expect(await owners()).toHaveLength(1);
    }
  });

  it('is for the CEO only (403/1001)', async () => {
    const manager = await createUser(svc, { role: 'manager' });
    await ceo.caller.users.grantOrgRole({ user_id: manager.id, role: 'viewer' });
    const res = await revoke(manager.id, 'viewer', {}, manager);
    expect(res.statusCode).toBe(403);
    await expect(manager.caller.users.revokeOrgRole({ user_id: manager.id, role: 'viewer' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await rowsOf(manager.id)).toHaveLength(1);
  });
});
