import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from '../src/rest/routeTable.ts';
import { buildOpenApiDocument } from '../src/rest/openapi/document.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';

// Rate limits on (the default): the operations declared in meta are the ones the limiter counts.
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

const usersRoutes = () => routeTable.filter((r) => r.procedurePath.startsWith('users.'));

describe('users.* procedures (CONTRACT §4.3, §4.7, §5)', () => {
  it.each([
    ['users.list', 'GET', '/users', 200, undefined],
    ['users.get', 'GET', '/users/{user_id}', 200, undefined],
    ['users.create', 'POST', '/users', 201, 'users.create'],
    ['users.updateRole', 'PATCH', '/users/{user_id}', 200, 'users.update_role'],
    ['users.delete', 'DELETE', '/users/{user_id}', 204, 'users.delete'],
    ['users.grantOrgRole', 'POST', '/users/{user_id}/org-roles', 201, 'users.grant_org_role'],
    ['users.revokeOrgRole', 'DELETE', '/users/{user_id}/org-roles/{role}', 204, 'users.revoke_org_role'],
    ['users.resetMfa', 'DELETE', '/users/{user_id}/mfa', 204, 'users.reset_mfa'],
  ])('%s is %s %s → %i with limits op %s', (name, method, path, status, op) => {
    const route = usersRoutes().find((r) => r.procedurePath === name);
    expect(route).toBeDefined();
    expect(route).toMatchObject({ method, openapiPath: path });
    expect(route!.rest.status ?? 200).toBe(status);
    expect(route!.meta.limits?.op).toBe(op);
  });

  it('are exactly the eight of the contract (rev. 3 adds users.resetMfa)', () => {
    expect(usersRoutes().map((r) => r.procedurePath).sort()).toEqual(
      ['users.create', 'users.delete', 'users.get', 'users.grantOrgRole', 'users.list', 'users.resetMfa', 'users.revokeOrgRole', 'users.updateRole'].sort(),
    );
  });

  it('describe Location on create, ETag on get, pagination on list, and the contract statuses in OpenAPI', () => {
    const doc = buildOpenApiDocument('http://agent-org.test');
    const paths = doc.paths ?? {};
    const create = paths['/users']?.post?.responses ?? {};
    expect(Object.keys(create).sort()).toEqual(['201', '400', '401', '403', '409', '429', '500', '503']);
    expect(JSON.stringify(create['201'])).toContain('Location');
    expect(JSON.stringify(paths['/users/{user_id}']?.get?.responses?.['200'])).toContain('ETag');
    expect(JSON.stringify(paths['/users']?.get?.responses?.['200'])).toContain('Pagination');
    expect(Object.keys(paths['/users/{user_id}']?.delete?.responses ?? {})).toContain('204');
    expect(Object.keys(paths['/users/{user_id}']?.delete?.responses ?? {})).toContain('409');
    const userResponse = doc.components?.schemas?.UserResponse;
    const properties = userResponse && 'properties' in userResponse ? Object.keys(userResponse.properties ?? {}) : [];
    expect(properties.sort()).toEqual(['created_at', 'id', 'kind', 'mfa_enabled', 'must_change_password', 'org_roles', 'role', 'scoped_departments', 'updated_at', 'username']);
  });
});

describe('rate limits of users.* (CONTRACT §5)', () => {
  it('users.delete allows 3 calls a minute per CEO; the 4th gets 429/5001 with Retry-After', async () => {
    const ceo = await createUser(svc, { role: 'ceo' });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await svc.app.inject({ method: 'DELETE', url: `/api/v1/users/${randomUUID()}`, headers: ceo.headers });
      statuses.push(res.statusCode);
      if (res.statusCode === 429) {
        expect(res.json().error_detail).toMatchObject({ error_code: 5001, retryable: true });
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
    }
    expect(statuses).toEqual([404, 404, 404, 429]);
  });

  it('reads are not limited per operation', async () => {
    const reader = await createUser(svc, { role: 'observer' });
    for (let i = 0; i < 12; i++) {
      const res = await svc.app.inject({ method: 'GET', url: '/api/v1/users?limit=1', headers: reader.headers });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});
