// User administration: list, read, create, change the role, delete (revoking the user's sessions with it).
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { recordEvent } from '../../events/record.ts';
import type { ListUsersInput, UserKind, UserResponse } from '../../contracts/users.ts';
import { revokeUserKeys } from '../apiKeys/store.ts';
import { deleteMfa } from '../mfa/store.ts';
import { createAccount, createServiceAccount } from '../auth/accounts.ts';
import type { Role } from '../../contracts/roles.ts';
import { revokeUserSessions } from '../auth/sessions.ts';
import { assertIfMatch } from '../etag.ts';
import { decodeCursor, toPage } from '../pagination.ts';
import { assertNotLastOwner, summariseGrants } from './grants.ts';
import * as store from './store.ts';
import type { Clock } from '../../contracts/clock.ts';
import type { Actor } from '../../contracts/actor.ts';
import { DEFAULT_PAGE_SIZE, type Pagination } from '../../contracts/pagination.ts';

export const USERS_LIST = 'users';

// User ids are UUIDs; anything else can name no user, and must not reach a uuid cast (that would be a 500).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUserId(id: string): boolean {
  return UUID.test(id);
}

/** What a user's representation is made of: a list reads the timestamps as ISO text already (store.ts), other reads as Dates. */
type UserSource = Omit<store.ListedUser, 'createdAt' | 'updatedAt'> & { createdAt: Date | string; updatedAt: Date | string };

const isoOf = (at: Date | string): string => (typeof at === 'string' ? at : at.toISOString());

/** The one mapping from a stored user to the wire, in the schema's key order (an ETag computed here equals GET's). */
export function toUserResponse(user: UserSource): UserResponse {
  const { orgRoles, scopedDepartments } = summariseGrants(user.grants);
  return {
    id: user.id,
    username: user.username,
    role: user.role,
    kind: user.kind,
    must_change_password: user.mustChangePassword,
    mfa_enabled: user.mfaEnabled,
    org_roles: orgRoles,
    scoped_departments: scopedDepartments,
    created_at: isoOf(user.createdAt),
    updated_at: isoOf(user.updatedAt),
  };
}

async function findUserResponse(em: EntityManager, id: string): Promise<UserResponse | undefined> {
  if (!isUserId(id)) return undefined;
  const user = await store.findUserWithGrants(em, id);
  return user && toUserResponse(user);
}

/**
 * Locks the user's row for the rest of the transaction, then reads the representation. Every mutation of a
 * user takes this lock first, so org-role changes, role changes and deletion of one user are serialised and
 * If-Match is compared with what is really there. The read is a separate statement on purpose: under READ
 * COMMITTED it gets a fresh snapshot after the lock wait, which a subquery of the locking statement would not.
 */
export async function lockUserResponse(tx: EntityManager, id: string): Promise<UserResponse> {
  if (!isUserId(id) || !(await store.lockUser(tx, id))) throw ApiError.notFound('user not found');
  const user = await findUserResponse(tx, id);
  if (!user) throw ApiError.notFound('user not found');
  return user;
}

const UserPosition = z.tuple([z.iso.datetime({ precision: 3 }), z.string().refine(isUserId)]);

export async function listUsers({ em, secret }: { em: EntityManager; secret: Buffer }, input: ListUsersInput): Promise<{ items: UserResponse[]; pagination: Pagination }> {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  let after: { createdAt: Date; id: string } | null = null;
  if (input.cursor) {
    // Signed, so only our own positions get here; the shape check keeps a future format change from reaching SQL.
    const position = UserPosition.safeParse(decodeCursor(secret, USERS_LIST, input.cursor));
    if (!position.success) throw ApiError.badRequest('query.cursor: invalid or expired cursor');
    after = { createdAt: new Date(position.data[0]), id: position.data[1] };
  }
  const users = await store.userPage(em, after, limit + 1, input.kind ?? null);
  return toPage(users, { limit, secret, list: USERS_LIST, positionOf: (u) => [u.createdAt, u.id], toItem: toUserResponse });
}

export async function getUser({ em }: { em: EntityManager }, input: { user_id: string }): Promise<UserResponse> {
  const user = await findUserResponse(em, input.user_id);
  if (!user) throw ApiError.notFound('user not found');
  return user;
}

export async function createUser(
  { em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor },
  input: { username: string; password?: string | undefined; role: Role; kind: UserKind },
): Promise<UserResponse> {
  const { username, password, role } = input;
  // The request schema pairs the two already (CreateUserInput); this keeps any other caller to the same rule.
  if ((input.kind === 'service') !== (password === undefined)) throw ApiError.badRequest(`body.password: ${input.kind === 'service' ? 'not allowed for a service account' : 'required for a human user'}`);
  // A CEO is calling, so one exists; the partial unique index would refuse a second one anyway.
  if (input.role === 'ceo') throw ApiError.conflict('there is already a CEO; a second one cannot be created');
  return em.transactional(async (tx) => {
    // The username_key unique index decides duplicates (409/4001 through errors.ts), so a concurrent one loses in the database.
    const user =
      password === undefined
        ? await createServiceAccount({ em: tx, clock }, { username, role })
        : await createAccount({ em: tx, clock }, { username, password, role, mustChangePassword: true });
    const created = toUserResponse({ ...user, grants: [] });
    await recordEvent(tx, { type: 'user.created', actor: actor.username, at: user.createdAt, data: created });
    return created;
  });
}

export async function updateUserRole(
  { em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor },
  input: { user_id: string; role: Role; ifMatch?: string | undefined },
): Promise<UserResponse> {
  return em.transactional(async (tx) => {
    const current = await lockUserResponse(tx, input.user_id);
    assertIfMatch(input.ifMatch, current);
    // Setting the role a user already has changes nothing, so it is not a conflict, bumps no timestamp and records no event.
    if (current.role === input.role) return current;
    if (current.role === 'ceo') throw ApiError.conflict("the CEO's role cannot be changed");
    if (input.role === 'ceo') throw ApiError.conflict('there is already a CEO; a second one cannot be made');
    const now = clock.now();
    await store.setUserRole(tx, input.user_id, input.role, now);
    const updated = await lockUserResponse(tx, input.user_id);
    await recordEvent(tx, { type: 'user.updated', actor: actor.username, at: now, data: updated });
    return updated;
  });
}

export async function deleteUser(
  { em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor },
  input: { user_id: string; ifMatch?: string | undefined },
): Promise<void> {
  await em.transactional(async (tx) => {
    const current = await lockUserResponse(tx, input.user_id);
    assertIfMatch(input.ifMatch, current);
    if (current.id === actor.userId) throw ApiError.conflict('you cannot delete your own account');
    if (current.role === 'ceo') throw ApiError.conflict('the CEO cannot be deleted');
    if (current.org_roles.includes('owner')) assertNotLastOwner(await store.lockOwners(tx), current.id, 'cannot delete the last owner');
    await store.deleteUser(tx, current.id);
    // user.deleted first, then one session.revoked per session the deletion ended (their order in the outbox).
    await recordEvent(tx, { type: 'user.deleted', actor: actor.username, at: clock.now(), data: { id: current.id, username: current.username } });
    // Same transaction: the deletion and the end of every session and API key (and the two-factor key and codes) of the user commit together.
    await revokeUserSessions({ em: tx, clock }, current.id, 'user_deleted', { username: actor.username });
    await revokeUserKeys(tx, current.id, clock.now());
    await deleteMfa(tx, current.id);
  });
}
