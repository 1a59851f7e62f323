import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { deleteUser } from '../src/services/users/users.ts';
import type { TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo());
});
afterAll(() => svc.close());

const del = (userId: string, headers: Record<string, string> = {}, user: TestUser = ceo) =>
  svc.app.inject({ method: 'DELETE', url: `/api/v1/users/${userId}`, headers: { ...user.headers, ...headers } });

const whoAmI = (user: TestUser) => svc.app.inject({ method: 'GET', url: '/api/v1/users', headers: user.headers });

async function exists(userId: string): Promise<boolean> {
  const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('users').select('id').where('id', '=', userId).execute();
  return rows.length === 1;
}

async function orgRoleRows(userId: string): Promise<string[]> {
  const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('user_org_roles').select('role').where('userId', '=', userId).orderBy('role').execute();
  return rows.map((r) => r.role);
}

async function owners(): Promise<string[]> {
  const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('user_org_roles').select('userId').where('role', '=', 'owner').orderBy('userId').execute();
  return rows.map((r) => r.userId);
}

/** Makes exactly `users` the owners: every other owner row is removed first. */
async function makeOnlyOwners(...users: TestUser[]): Promise<void> {
  for (const id of await owners()) {
    if (!users.some((u) => u.id === id)) await kysely(svc.deps.orm.em.fork()).deleteFrom('user_org_roles').where('role', '=', 'owner').where('userId', '=', id).execute();
  }
  for (const user of users) {
    if (!(await owners()).includes(user.id)) await ceo.caller.users.grantOrgRole({ user_id: user.id, role: 'owner' });
  }
}

describe('DELETE /api/v1/users/{user_id}', () => {
  it('deletes the user (204, no body, no Content-Type) together with the org roles', async () => {
    const target = await createUser(svc, { role: 'manager' });
    await ceo.caller.users.grantOrgRole({ user_id: target.id, role: 'editor' });
    await ceo.caller.users.grantOrgRole({ user_id: target.id, role: 'department_admin', scoped_departments: ['engineering'] });
    const res = await del(target.id);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['content-type']).toBeUndefined();
    expect(await exists(target.id)).toBe(false);
    expect(await orgRoleRows(target.id)).toEqual([]);
    const gone = await svc.app.inject({ method: 'GET', url: `/api/v1/users/${target.id}`, headers: ceo.headers });
    expect(gone.statusCode).toBe(404);
  });

  it("revokes all of the user's sessions: their next request gets 401/1002", async () => {
    const target = await createUser(svc, { role: 'observer' });
    const secondSession = await svc.deps.orm.em.fork().transactional((tx) => issueSession({ em: tx, clock: svc.deps.clock, config: svc.deps.config }, target.id, { ip: '127.0.0.1', userAgent: 'second device' }));
    expect((await whoAmI(target)).statusCode).toBe(200);
    expect((await del(target.id)).statusCode).toBe(204);
    for (const token of [target.token, secondSession.accessToken]) {
      const res = await svc.app.inject({ method: 'GET', url: '/api/v1/users', headers: { authorization: `Bearer ${token}`, accept: 'application/problem+json' } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ status: 401, error_code: 1002 });
    }
    const row = await kysely(svc.deps.orm.em.fork())
      .selectFrom('sessions')
      .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
      .where('userId', '=', target.id)
      .where('revokedReason', '=', 'user_deleted')
      .executeTakeFirstOrThrow();
    expect(row.n).toBe(2);
  });

  it('refuses to delete oneself (409/4000)', async () => {
    const res = await del(ceo.id, { accept: 'application/problem+json' });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json()).toMatchObject({ status: 409, error_code: 4000, detail: 'you cannot delete your own account' });
    expect(await exists(ceo.id)).toBe(true);
  });

  it('refuses to delete the CEO (409/4000), whoever asks', async () => {
    // Only the CEO may call the endpoint, so "the CEO" is otherwise always "self"; the rule is the service's own.
    const other = await createUser(svc, { role: 'manager' });
    const actor = { userId: other.id, username: other.username, role: 'ceo' as const, kind: 'human' as const, mustChangePassword: false, mfaEnabled: false, orgRoles: [], scopedDepartments: [], sessionId: other.sessionId, via: 'bearer' as const };
    await expect(deleteUser({ em: svc.deps.orm.em.fork(), clock: svc.deps.clock, actor }, { user_id: ceo.id })).rejects.toMatchObject({ errorCode: 4000, detail: 'the CEO cannot be deleted' });
    expect(await exists(ceo.id)).toBe(true);
    expect((await whoAmI(ceo)).statusCode).toBe(200);
  });

  it('refuses to delete the last owner (409/4000) and leaves the user, the roles and the sessions intact', async () => {
    const owner = await createUser(svc, { role: 'manager' });
    await makeOnlyOwners(owner);
    const res = await del(owner.id);
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail.error_code).toBe(4000);
    expect(res.json().error).toMatch(/last owner/);
    expect(await exists(owner.id)).toBe(true);
    expect(await orgRoleRows(owner.id)).toEqual(['owner']);
    expect((await whoAmI(owner)).statusCode).toBe(200);
  });

  it('deletes an owner while another owner remains', async () => {
    const [a, b] = await Promise.all([createUser(svc, { role: 'manager' }), createUser(svc, { role: 'manager' })]);
    await makeOnlyOwners(a, b);
    expect((await del(a.id)).statusCode).toBe(204);
    expect(await owners()).toEqual([b.id]);
  });

  it('of a concurrent delete of one and revoke of the other of the last two owners exactly one succeeds', async () => {
    for (let round = 0; round < 4; round++) {
      const [a, b] = await Promise.all([createUser(svc, { role: 'manager' }), createUser(svc, { role: 'manager' })]);
      await makeOnlyOwners(a, b);
      const [deleted, revoked] = await Promise.all([
        del(a.id),
        svc.app.inject({ method: 'DELETE', url: `/api/v1/users/${b.id}/org-roles/owner`, headers: ceo.headers }),
      ]);
      expect([deleted.statusCode, revoked.statusCode].sort()).toEqual([204, 409]);
      expect(await owners()).toHaveLength(1);
    }
  });

  it('honours If-Match: a stale ETag is 409/4002 and nothing is deleted', async () => {
    const target = await createUser(svc, { role: 'observer' });
    const etag = (await svc.app.inject({ method: 'GET', url: `/api/v1/users/${target.id}`, headers: ceo.headers })).headers.etag!;
    await ceo.caller.users.updateRole({ user_id: target.id, role: 'board_member' });
    const stale = await del(target.id, { 'if-match': etag });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error_detail.error_code).toBe(4002);
    expect(await exists(target.id)).toBe(true);
    expect((await whoAmI(target)).statusCode).toBe(200);
    const fresh = (await svc.app.inject({ method: 'GET', url: `/api/v1/users/${target.id}`, headers: ceo.headers })).headers.etag!;
    expect((await del(target.id, { 'if-match': fresh })).statusCode).toBe(204);
  });

  it('is 404/3000 for an unknown or already deleted user, 400/2001 for a 129-character id', async () => {
    const target = await createUser(svc, { role: 'observer' });
    expect((await del(target.id)).statusCode).toBe(204);
    for (const id of [target.id, randomUUID(), 'not-a-uuid']) {
      const res = await del(id);
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error_detail.error_code).toBe(3000);
    }
    const long = await del('x'.repeat(129));
    expect(long.statusCode).toBe(400);
    expect(long.json().error_detail.error_code).toBe(2001);
  });

  it('refuses a body with unknown fields (400/2001)', async () => {
    const target = await createUser(svc, { role: 'observer' });
    const res = await svc.app.inject({
      method: 'DELETE',
      url: `/api/v1/users/${target.id}`,
      headers: { ...ceo.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ force: true }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail.error_code).toBe(2001);
    expect(await exists(target.id)).toBe(true);
  });

  it('is for the CEO only (403/1001)', async () => {
    const manager = await createUser(svc, { role: 'manager' });
    const target = await createUser(svc, { role: 'observer' });
    const res = await del(target.id, {}, manager);
    expect(res.statusCode).toBe(403);
    expect(res.json().error_detail.error_code).toBe(1001);
    await expect(manager.caller.users.delete({ user_id: target.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await exists(target.id)).toBe(true);
  });
});
