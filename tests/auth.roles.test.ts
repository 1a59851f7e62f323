// Roles are read fresh on every request: a role change applies to the user's next request, without re-login.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';

const PROBLEM = { accept: 'application/problem+json' };

let svc: TestService;
beforeAll(async () => {
  // No first-run setup here, so the database has no CEO and the test may promote someone to it.
  svc = await startTestService({ env: { RATE_LIMIT_STORE: 'memory' } });
});
afterAll(() => svc.close());

const setRole = (userId: string, role: string) => svc.db.orm.em.fork().getConnection().execute('update users set role = ? where id = ?', [role, userId]);

describe('a role change', () => {
  it('applies on the next request with the same bearer token (GET /auth/sessions?scope=all)', async () => {
    const user = await createUser(svc, { role: 'manager' });
    const allSessions = () => svc.app.inject({ method: 'GET', url: '/api/v1/auth/sessions?scope=all', headers: { ...user.headers, ...PROBLEM } });

    expect((await allSessions()).json()).toMatchObject({ status: 403, error_code: 1001 });
    await setRole(user.id, 'ceo');
    const promoted = await allSessions();
    expect(promoted.statusCode).toBe(200);
    expect(Array.isArray(promoted.json().data)).toBe(true);
    await setRole(user.id, 'observer');
    expect((await allSessions()).json()).toMatchObject({ status: 403, error_code: 1001 });
  });

  it('is what GET /auth/me reports on the next request', async () => {
    const user = await createUser(svc, { role: 'observer' });
    expect((await user.caller.auth.me()).role).toBe('observer');
    await setRole(user.id, 'board_member');
    expect((await user.caller.auth.me()).role).toBe('board_member');
  });

  it('applies through the tRPC caller as well', async () => {
    const user = await createUser(svc, { role: 'pair_programmer' });
    await expect(user.caller.auth.listSessions({ scope: 'all' })).rejects.toMatchObject({ errorCode: 1001 });
    await setRole(user.id, 'ceo');
    await expect(user.caller.auth.listSessions({ scope: 'all' })).resolves.toEqual(expect.any(Array));
    await setRole(user.id, 'pair_programmer');
  });
});

describe('org roles on GET /auth/me', () => {
  it('reflect grants and revocations on the next request, departments merged and sorted', async () => {
    const user = await createUser(svc, { role: 'manager' });
    const grant = (role: string, departments: string[]) =>
      svc.db.orm.em
        .fork()
        .getConnection()
        .execute('insert into user_org_roles (user_id, role, scoped_departments, created_at) values (?, ?, ?::text[], now())', [user.id, role, `{${departments.join(',')}}`]);
    expect(await user.caller.auth.me()).toMatchObject({ org_roles: [], scoped_departments: [] });
    await grant('editor', []);
    await grant('department_admin', ['research', 'engineering']);
    expect(await user.caller.auth.me()).toMatchObject({ org_roles: ['department_admin', 'editor'], scoped_departments: ['engineering', 'research'] });
    await svc.db.orm.em.fork().getConnection().execute('delete from user_org_roles where user_id = ?', [user.id]);
    expect(await user.caller.auth.me()).toMatchObject({ org_roles: [], scoped_departments: [] });
  });
});
