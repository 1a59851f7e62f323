// User administration: list, read, create, change the role, delete (revoking the user's sessions with it).
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Actor, Deps } from '../../context/index.ts';
import { sqlRun } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import { insertUser, uniqueViolation } from '../auth/accounts.ts';
import type { Role } from '../auth/guards.ts';
import { revokeUserSessions } from '../auth/sessions.ts';
import { assertIfMatch } from '../etag.ts';
import { DEFAULT_PAGE_SIZE, decodeCursor, toPage, type Pagination } from '../pagination.ts';
import { assertNotLastOwner, lockOwners } from './orgRoles.ts';
import { findUserView, isUserId, iso, lockUserView, userPageRows, type UserView } from './views.ts';

export const USERS_LIST = 'users';

const UserPosition = z.tuple([z.iso.datetime({ precision: 3 }), z.string().refine(isUserId)]);

export async function listUsers(
  em: EntityManager,
  deps: Deps,
  input: { cursor?: string | null | undefined; limit?: number | null | undefined },
): Promise<{ items: UserView[]; pagination: Pagination }> {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  let after: { createdAt: string; id: string } | null = null;
  if (input.cursor) {
    // Signed, so only our own positions get here; the shape check keeps a future format change from reaching SQL.
    const position = UserPosition.safeParse(decodeCursor(deps.secret, USERS_LIST, input.cursor));
    if (!position.success) throw ApiError.badRequest('query.cursor: invalid or expired cursor');
    after = { createdAt: position.data[0], id: position.data[1] };
  }
  const rows = await userPageRows(em, after, limit + 1);
  return toPage(rows, { limit, secret: deps.secret, list: USERS_LIST, positionOf: (u) => [u.created_at, u.id], toItem: (u) => u });
}

export async function getUser(em: EntityManager, _deps: Deps, input: { user_id: string }): Promise<UserView> {
  const view = await findUserView(em, input.user_id);
  if (!view) throw ApiError.notFound('user not found');
  return view;
}

export async function createUser(
  em: EntityManager,
  deps: Deps,
  _actor: Actor,
  input: { username: string; password: string; role: Role },
): Promise<UserView> {
  // A CEO is calling, so one exists; the partial unique index would refuse a second one anyway.
  if (input.role === 'ceo') throw ApiError.conflict('there is already a CEO; a second one cannot be created');
  // insertUser maps the username_key unique index to 409/4001, so a concurrent duplicate loses in the database.
  const row = await insertUser(em, deps, { username: input.username, password: input.password, role: input.role, mustChangePassword: true });
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    must_change_password: row.must_change_password,
    org_roles: [],
    scoped_departments: [],
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export async function updateUserRole(
  em: EntityManager,
  deps: Deps,
  _actor: Actor,
  input: { user_id: string; role: Role; ifMatch?: string | undefined },
): Promise<UserView> {
  return em.transactional(async (tx) => {
    const current = await lockUserView(tx, input.user_id);
    assertIfMatch(input.ifMatch, current);
    // Setting the role a user already has changes nothing, so it is not a conflict and bumps no timestamp.
    if (current.role === input.role) return current;
    if (current.role === 'ceo') throw ApiError.conflict("the CEO's role cannot be changed");
    if (input.role === 'ceo') throw ApiError.conflict('there is already a CEO; a second one cannot be made');
    try {
      await sqlRun(tx, 'update users set role = ?, updated_at = ? where id = ?', [input.role, deps.clock.now(), input.user_id]);
    } catch (error) {
      throw uniqueViolation(error) ?? error;
    }
    return lockUserView(tx, input.user_id);
  });
}

export async function deleteUser(
  em: EntityManager,
  deps: Deps,
  actor: Actor,
  input: { user_id: string; ifMatch?: string | undefined },
): Promise<void> {
  await em.transactional(async (tx) => {
    const current = await lockUserView(tx, input.user_id);
    assertIfMatch(input.ifMatch, current);
    if (current.id === actor.userId) throw ApiError.conflict('you cannot delete your own account');
    if (current.role === 'ceo') throw ApiError.conflict('the CEO cannot be deleted');
    if (current.org_roles.includes('owner')) assertNotLastOwner(await lockOwners(tx), current.id, 'cannot delete the last owner');
    await sqlRun(tx, 'delete from user_org_roles where user_id = ?', [current.id]);
    await sqlRun(tx, 'delete from users where id = ?', [current.id]);
    // Same transaction: the deletion and the end of every session of the user commit together.
    await revokeUserSessions(tx, deps, current.id, 'user_deleted');
  });
}
