// The api_keys table: the only module that reads or writes it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Insertable } from 'kysely';
import { kysely, type DB, type Stored } from '../../db/kysely.ts';
import { prepared, type Placeholder } from '../../db/prepared.ts';
import { grantsOf } from '../users/store.ts';

export type StoredApiKey = Stored<'api_keys'>;
/** A key with its owner's name, as lists and reads show it. */
export type ApiKeyWithOwner = StoredApiKey & { username: string };

export async function insertApiKey(em: EntityManager, key: Insertable<DB['api_keys']>): Promise<void> {
  await kysely(em).insertInto('api_keys').values(key).execute();
}

/** Keys of the user that still work at `now`: not revoked, not expired (the cap of 20 counts these). */
export async function countActiveKeys(em: EntityManager, userId: string, now: Date): Promise<number> {
  const row = await kysely(em)
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('userId', '=', userId)
    .where('revokedAt', 'is', null)
    .where((eb) => eb.or([eb('expiresAt', 'is', null), eb('expiresAt', '>', now)]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The lookup every request made with a key runs: the key by the hash of its secret, its user (a left join: a
 * deleted user's key still answers 1002) with the user's grants, in one statement. Prepared, as the session
 * lookup is: a key authenticates as often as a token.
 */
const keyBySecretHash = prepared('api_key_lookup', (db, $: Placeholder<{ secretHash: string }>) =>
  db
    .selectFrom('api_keys as k')
    .leftJoin('users as u', 'u.id', 'k.userId')
    .select(['k.id', 'k.secretHash', 'k.userId', 'k.name', 'k.prefix', 'k.scopes', 'k.expiresAt', 'k.lastUsedAt', 'k.revokedAt'])
    .select(['u.username', 'u.role', 'u.kind', 'u.mustChangePassword', 'u.mfaEnabled'])
    .select((eb) => grantsOf(eb.ref('k.userId')).as('grants'))
    .where('k.secretHash', '=', $('secretHash')),
);

export type ApiKeyLookup = Awaited<ReturnType<typeof keyBySecretHash>>[number];

export async function findKeyBySecretHash(em: EntityManager, secretHash: string): Promise<ApiKeyLookup | undefined> {
  return (await keyBySecretHash(em, { secretHash }))[0];
}

/** Records a use, unless one was recorded since `notSince`: at most one write a minute per key, however many requests race. */
export async function touchKey(em: EntityManager, id: string, now: Date, notSince: Date): Promise<void> {
  await kysely(em)
    .updateTable('api_keys')
    .set({ lastUsedAt: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('lastUsedAt', 'is', null), eb('lastUsedAt', '<=', notSince)]))
    .execute();
}

function withOwner(em: EntityManager) {
  // An inner join: the keys of a deleted user are revoked with it and no longer listed.
  return kysely(em).selectFrom('api_keys').innerJoin('users', 'users.id', 'api_keys.userId').selectAll('api_keys').select('users.username');
}

export async function findKey(em: EntityManager, id: string): Promise<ApiKeyWithOwner | undefined> {
  return withOwner(em).where('api_keys.id', '=', id).executeTakeFirst();
}

type KeyPosition = { createdAt: Date; id: string };

/** One page newest first (created_at, id descending), after `after` when given; one user's keys or, with null, everyone's. */
export async function keyPage(em: EntityManager, query: { userId: string | null; after: KeyPosition | null; fetch: number }): Promise<ApiKeyWithOwner[]> {
  let select = withOwner(em);
  if (query.userId !== null) select = select.where('api_keys.userId', '=', query.userId);
  const after = query.after;
  if (after) select = select.where((eb) => eb(eb.refTuple('api_keys.createdAt', 'api_keys.id'), '<', eb.tuple(after.createdAt, after.id)));
  return select.orderBy('api_keys.createdAt', 'desc').orderBy('api_keys.id', 'desc').limit(query.fetch).execute();
}

/** Sets revoked_at unless the key already is revoked; whether it was live. */
export async function revokeKey(em: EntityManager, id: string, now: Date): Promise<boolean> {
  const result = await kysely(em).updateTable('api_keys').set({ revokedAt: now }).where('id', '=', id).where('revokedAt', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Revokes every unrevoked key of the user; how many. */
export async function revokeUserKeys(em: EntityManager, userId: string, now: Date): Promise<number> {
  const result = await kysely(em).updateTable('api_keys').set({ revokedAt: now }).where('userId', '=', userId).where('revokedAt', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The keys behind open event streams with their user's role; a key that no longer exists is absent. */
export async function keyStates(em: EntityManager, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return kysely(em)
    .selectFrom('api_keys as k')
    .leftJoin('users as u', 'u.id', 'k.userId')
    .select(['k.id', 'k.expiresAt', 'k.revokedAt', 'u.role'])
    .where('k.id', 'in', ids)
    .execute();
}
