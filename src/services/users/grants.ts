// Organization roles: their names, the departments rule, the last-owner rule, and how a user's grants read.
import type { Grant, OrgRole } from '../../contracts/roles.ts';
import { ApiError } from '../../errors.ts';


/**
 * What /auth/me and /users show of a user's grants: the roles sorted, and the sorted union of their
 * departments. Both endpoints (and the request's actor) read them through here, so they always agree.
 */
export function summariseGrants(grants: readonly Grant[]): { orgRoles: OrgRole[]; scopedDepartments: string[] } {
  return {
    orgRoles: grants.map((g) => g.role).sort(),
    scopedDepartments: [...new Set(grants.flatMap((g) => g.scopedDepartments))].sort(),
  };
}

export function normaliseDepartments(role: OrgRole, departments: readonly string[] | null | undefined): string[] {
  const unique = [...new Set(departments ?? [])].sort();
  if (role === 'department_admin' && unique.length === 0) throw ApiError.validation('department_admin requires at least one scoped department');
  if (role !== 'department_admin' && unique.length > 0) throw ApiError.validation(`${role} does not take scoped departments`);
  return unique;
}

/** Refuses (409/4000) when `userId` holds the owner role and nobody else does. Call with the owner rows locked. */
export function assertNotLastOwner(owners: readonly string[], userId: string, what: string): void {
  if (owners.includes(userId) && owners.length <= 1) throw ApiError.conflict(`${what}: the organization must keep at least one owner`);
}
