// Granting and revoking organization roles, and the "at least one owner stays" rule every removal shares.
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor, Deps } from '../../context/index.ts';
import { sqlRows, sqlRun } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import { assertIfMatch } from '../etag.ts';
import { lockUserView, type UserView } from './views.ts';

export const ORG_ROLES = ['owner', 'department_admin', 'editor', 'viewer'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

export const MAX_SCOPED_DEPARTMENTS = 100;

/**
 * Locks every `owner` row (in one order, so two removals cannot deadlock) and returns their user ids.
 * A removal that waited for another one sees its deletion once it gets the lock, so of two concurrent
 * removals of the last two owners the second finds one owner left and refuses.
 */
export async function lockOwners(tx: EntityManager): Promise<string[]> {
  const rows = await sqlRows<{ user_id: string }>(tx, `select user_id::text as user_id from user_org_roles where role = 'owner' order by user_id for update`);
  return rows.map((r) => r.user_id);
}

/** Refuses (409/4000) when `userId` holds the owner role and nobody else does. Call with the owner rows locked. */
export function assertNotLastOwner(owners: readonly string[], userId: string, what: string): void {
  if (owners.includes(userId) && owners.length <= 1) throw ApiError.conflict(`${what}: the organization must keep at least one owner`);
}

export async function touchUser(tx: EntityManager, deps: Deps, userId: string): Promise<void> {
  await sqlRun(tx, 'update users set updated_at = ? where id = ?', [deps.clock.now(), userId]);
}

export type GrantOrgRoleInput = {
  user_id: string;
  role: OrgRole;
  scoped_departments?: string[] | null | undefined;
  ifMatch?: string | undefined;
};

export function normaliseDepartments(role: OrgRole, departments: readonly string[] | null | undefined): string[] {
  const unique = [...new Set(departments ?? [])].sort();
  if (role === 'department_admin' && unique.length === 0) throw ApiError.validation('department_admin requires at least one scoped department');
  if (role !== 'department_admin' && unique.length > 0) throw ApiError.validation(`${role} does not take scoped departments`);
  return unique;
}

export async function grantOrgRole(em: EntityManager, deps: Deps, _actor: Actor, input: GrantOrgRoleInput): Promise<UserView> {
  const departments = normaliseDepartments(input.role, input.scoped_departments);
  return em.transactional(async (tx) => {
    const current = await lockUserView(tx, input.user_id);
    assertIfMatch(input.ifMatch, current);
    try {
      // The ORM inlines parameters and spreads an array as a comma list, hence array[?].
      await sqlRun(tx, 'insert into user_org_roles (user_id, role, scoped_departments, created_at) values (?, ?, array[?]::text[], ?)', [
        input.user_id,
        input.role,
        departments,
        deps.clock.now(),
      ]);
    } catch (error) {
      // The primary key (user_id, role) decides; a grant racing this one on the same user waits on the user lock.
      if (error instanceof UniqueConstraintViolationException) throw ApiError.duplicate(`the user already holds the org role ${input.role}`);
      throw error;
    }
    await touchUser(tx, deps, input.user_id);
    return lockUserView(tx, input.user_id);
  });
}

export type RevokeOrgRoleInput = { user_id: string; role: OrgRole; ifMatch?: string | undefined };

export async function revokeOrgRole(em: EntityManager, deps: Deps, _actor: Actor, input: RevokeOrgRoleInput): Promise<void> {
  await em.transactional(async (tx) => {
    const current = await lockUserView(tx, input.user_id);
    assertIfMatch(input.ifMatch, current);
    if (input.role === 'owner') assertNotLastOwner(await lockOwners(tx), input.user_id, 'cannot revoke the last owner');
    const removed = await sqlRun(tx, 'delete from user_org_roles where user_id = ? and role = ?', [input.user_id, input.role]);
    if (removed === 0) throw ApiError.notFound(`the user does not hold the org role ${input.role}`);
    await touchUser(tx, deps, input.user_id);
  });
}
