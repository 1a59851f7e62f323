// The users and user_org_roles tables: the only module that reads or writes them.
import type { EntityManager } from '@mikro-orm/postgresql';
import { expressionBuilder, sql, type Expression, type ExpressionBuilder, type Insertable } from 'kysely';
import { jsonBuildObject } from 'kysely/helpers/postgres';
import { isoText, kysely, type DB, type Stored } from '../../db/kysely.ts';
import { prepared, type Placeholder } from '../../db/prepared.ts';
import type { Role } from '../../contracts/roles.ts';
import type { OrgRole } from '../../contracts/roles.ts';
import type { Grant } from '../../contracts/roles.ts';
import type { UserKind } from '../../contracts/users.ts';
import { totpOf, type StoredTotp } from '../mfa/store.ts';

export type StoredUser = Stored<'users'>;
/** A user with every org role it holds, read in the same statement. */
export type UserWithGrants = StoredUser & { grants: Grant[] };

/**
 * A user's grants as one JSON array (so a user, or a page of them, costs one round trip); the session lookup
 * reads them too. Keys spelled out: the renaming of columns to properties leaves what is inside JSON as it is.
 */
export function grantsOf(userId: Expression<string>) {
  const eb = expressionBuilder<DB, never>();
  const grants = eb
    .selectFrom('user_org_roles as r')
    .select((r) => r.fn.jsonAgg(jsonBuildObject({ role: r.ref('r.role'), scopedDepartments: r.ref('r.scopedDepartments') })).orderBy('r.role').as('grants'))
    .where('r.userId', '=', userId);
  return eb.fn.coalesce(grants, sql<Grant[]>`'[]'`);
}

const withGrants = (eb: ExpressionBuilder<DB, 'users'>) => grantsOf(eb.ref('users.id')).as('grants');

export async function insertUser(em: EntityManager, user: Insertable<DB['users']>): Promise<StoredUser> {
  return kysely(em).insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

export async function findUser(em: EntityManager, id: string): Promise<StoredUser | undefined> {
  return kysely(em).selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findUserWithGrants(em: EntityManager, id: string): Promise<UserWithGrants | undefined> {
  return kysely(em).selectFrom('users').selectAll('users').select(withGrants).where('users.id', '=', id).executeTakeFirst();
}

/** By the normalised login key (CONTRACT §3.4), with grants: a sign-in answers from this one read. */
export async function findUserByKeyWithGrants(em: EntityManager, usernameKey: string): Promise<UserWithGrants | undefined> {
  return kysely(em).selectFrom('users').selectAll('users').select(withGrants).where('users.usernameKey', '=', usernameKey).executeTakeFirst();
}

/** A user as a sign-in needs it: with grants and the user's TOTP key, if any (a pending enrollment's too: it counts only with mfaEnabled). */
export type LoginUser = UserWithGrants & { totp: StoredTotp | null };

/**
 * By the normalised login key, with grants and the TOTP key in the same statement: a sign-in answers from this
 * one read, and one that needs a code (CONTRACT §3.6) adds only the write that uses it up.
 */
export async function findLoginUser(em: EntityManager, usernameKey: string): Promise<LoginUser | undefined> {
  return kysely(em)
    .selectFrom('users')
    .selectAll('users')
    .select(withGrants)
    .select((eb) => totpOf(eb.ref('users.id')).as('totp'))
    .where('users.usernameKey', '=', usernameKey)
    .executeTakeFirst();
}

export async function ceoExists(em: EntityManager): Promise<boolean> {
  const row = await kysely(em).selectFrom('users').select('id').where('role', '=', 'ceo').limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * Locks the user's row until the transaction ends; false when there is no such user. With
 * `relaxCommitDurability`, the same round trip lets the transaction commit without waiting for the WAL flush
 * (`set_config(…, true)` is SET LOCAL as a function, which a select can carry).
 */
export async function lockUser(em: EntityManager, id: string, opts: { relaxCommitDurability?: boolean } = {}): Promise<boolean> {
  let query = kysely(em).selectFrom('users').select('id').where('id', '=', id).forUpdate();
  if (opts.relaxCommitDurability) query = query.select(sql<string>`set_config('synchronous_commit', 'off', true)`.as('synchronousCommit'));
  return (await query.execute()).length > 0;
}

type UserPosition = { createdAt: Date; id: string };

/**
 * A list's row: the columns a user's representation is made of (toUserResponse), no password hash; the timestamps
 * as the wire writes them, and the grants.
 */
const listed = (eb: ExpressionBuilder<DB, 'users'>) =>
  [
    'users.id',
    'users.username',
    'users.role',
    'users.kind',
    'users.mustChangePassword',
    'users.mfaEnabled',
    isoText(eb.ref('users.createdAt')).as('createdAt'),
    isoText(eb.ref('users.updatedAt')).as('updatedAt'),
    withGrants(eb),
  ] as const;

export type ListedUser = Pick<UserWithGrants, 'id' | 'username' | 'role' | 'kind' | 'mustChangePassword' | 'mfaEnabled' | 'grants'> & { createdAt: string; updatedAt: string };

/*
 * The list's two statements (first page, page after a position) run prepared (db/prepared.ts): the list is the
 * busiest read after the session lookup, and PostgreSQL then plans each once per connection
 * (docs/foundation.md#measured-reasons-behind-the-code).
 */
const firstUserPage = prepared('users_first_page', (db, $: Placeholder<{ fetch: number }>) =>
  db.selectFrom('users').select(listed).orderBy('users.createdAt').orderBy('users.id').limit($('fetch')),
);
const userPageAfter = prepared('users_page_after', (db, $: Placeholder<UserPosition & { fetch: number }>) =>
  db
    .selectFrom('users')
    .select(listed)
    .where((eb) => eb(eb.refTuple('users.createdAt', 'users.id'), '>', eb.tuple($('createdAt'), $('id'))))
    .orderBy('users.createdAt')
    .orderBy('users.id')
    .limit($('fetch')),
);

/** One page in the order (created_at, id), starting after `after` when given; only users of `kind` when given. */
export async function userPage(em: EntityManager, after: UserPosition | null, fetch: number, kind: UserKind | null = null): Promise<ListedUser[]> {
  if (kind !== null) return kindPage(em, after, fetch, kind);
  return after ? userPageAfter(em, { ...after, fetch }) : firstUserPage(em, { fetch });
}

/** The list filtered by kind (`GET /users?kind=`): rarer than the whole list, so an ordinary statement. */
async function kindPage(em: EntityManager, after: UserPosition | null, fetch: number, kind: UserKind): Promise<ListedUser[]> {
  let query = kysely(em).selectFrom('users').select(listed).where('users.kind', '=', kind);
  if (after) query = query.where((eb) => eb(eb.refTuple('users.createdAt', 'users.id'), '>', eb.tuple(after.createdAt, after.id)));
  return query.orderBy('users.createdAt').orderBy('users.id').limit(fetch).execute();
}

export async function setUserRole(em: EntityManager, id: string, role: Role, now: Date): Promise<void> {
  await kysely(em).updateTable('users').set({ role, updatedAt: now }).where('id', '=', id).execute();
}

/** A new password chosen by the user: the initial-password flag and the temporary password's clock go with it. */
export async function setPassword(em: EntityManager, id: string, passwordHash: string, now: Date): Promise<boolean> {
  const result = await kysely(em)
    .updateTable('users')
    .set({ passwordHash, mustChangePassword: false, temporaryPasswordSetAt: null, updatedAt: now })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * A temporary password set by an operator (npm run admin -- reset-password): the user must replace it at
 * sign-in, within TEMP_PASSWORD_TTL_S of now.
 */
export async function setTemporaryPassword(em: EntityManager, id: string, passwordHash: string, now: Date): Promise<void> {
  await kysely(em).updateTable('users').set({ passwordHash, mustChangePassword: true, temporaryPasswordSetAt: now, updatedAt: now }).where('id', '=', id).execute();
}

/** Every user in creation order, for the operators' listing (npm run admin -- list-users). */
export async function allUsers(em: EntityManager): Promise<StoredUser[]> {
  return kysely(em).selectFrom('users').selectAll().orderBy('createdAt').orderBy('id').execute();
}

/** The same password under new hashing parameters; not a change of the user, so updated_at stays. */
export async function replacePasswordHash(em: EntityManager, id: string, passwordHash: string): Promise<void> {
  await kysely(em).updateTable('users').set({ passwordHash }).where('id', '=', id).execute();
}

/**
 * Turns two-factor authentication on or off, compare-and-set: false when it already was so. Like a role change
 * it changes the user's representation (`mfa_enabled`), so updated_at moves and the ETag with it.
 */
export async function setMfaEnabled(em: EntityManager, id: string, enabled: boolean, now: Date): Promise<boolean> {
  const result = await kysely(em).updateTable('users').set({ mfaEnabled: enabled, updatedAt: now }).where('id', '=', id).where('mfaEnabled', '=', !enabled).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function touchUser(em: EntityManager, id: string, now: Date): Promise<void> {
  await kysely(em).updateTable('users').set({ updatedAt: now }).where('id', '=', id).execute();
}

/** Deletes the user and its org roles (call inside a transaction). */
export async function deleteUser(em: EntityManager, id: string): Promise<void> {
  await kysely(em).deleteFrom('user_org_roles').where('userId', '=', id).execute();
  await kysely(em).deleteFrom('users').where('id', '=', id).execute();
}

export async function insertGrant(em: EntityManager, grant: Insertable<DB['user_org_roles']>): Promise<void> {
  await kysely(em).insertInto('user_org_roles').values(grant).execute();
}

/** Removes one org role; false when the user did not hold it. */
export async function deleteGrant(em: EntityManager, userId: string, role: OrgRole): Promise<boolean> {
  const result = await kysely(em).deleteFrom('user_org_roles').where('userId', '=', userId).where('role', '=', role).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Locks every `owner` row (in one order, so two removals cannot deadlock) and returns their user ids.
 * A removal that waited for another one sees its deletion once it gets the lock, so of two concurrent
 * removals of the last two owners the second finds one owner left and refuses.
 */
export async function lockOwners(em: EntityManager): Promise<string[]> {
  const rows = await kysely(em).selectFrom('user_org_roles').select('userId').where('role', '=', 'owner').orderBy('userId').forUpdate().execute();
  return rows.map((r) => r.userId);
}
