// The user_totp and mfa_recovery_codes tables: the only module that reads or writes them.
import type { EntityManager } from '@mikro-orm/postgresql';
import { expressionBuilder, type Expression } from 'kysely';
import { jsonBuildObject } from 'kysely/helpers/postgres';
import { kysely, type DB } from '../../db/kysely.ts';
import { prepared, type Placeholder } from '../../db/prepared.ts';

/** A user's TOTP key as stored (sealed), and the last step a code of it was accepted for. */
export type StoredTotp = { secret: string; lastUsedStep: number | null };

/**
 * A user's TOTP key as one JSON object (null without one), for the login's read of the user: a sign-in that
 * needs a code reads its key in the statement that reads the user, with no round trip of its own.
 */
export function totpOf(userId: Expression<string>) {
  const eb = expressionBuilder<DB, never>();
  return eb
    .selectFrom('user_totp as t')
    .select((t) => jsonBuildObject({ secret: t.ref('t.secret'), lastUsedStep: t.ref('t.lastUsedStep') }).as('totp'))
    .where('t.userId', '=', userId);
}

export async function findTotp(em: EntityManager, userId: string): Promise<StoredTotp | undefined> {
  return kysely(em).selectFrom('user_totp').select(['secret', 'lastUsedStep']).where('userId', '=', userId).executeTakeFirst();
}

/** Keeps a new key for the user, replacing one not confirmed yet (call only while two-factor is off, under the user's lock). */
export async function putTotp(em: EntityManager, userId: string, secret: string, now: Date): Promise<void> {
  await kysely(em)
    .insertInto('user_totp')
    .values({ userId, secret, createdAt: now, lastUsedStep: null })
    .onConflict((oc) => oc.column('userId').doUpdateSet({ secret, createdAt: now, lastUsedStep: null }))
    .execute();
}

/**
 * Records that a code of `step` was accepted, unless one of this step or a later one already was: the
 * compare-and-set that lets each code through once, also when two requests present it at the same moment.
 */
export async function useStep(em: EntityManager, userId: string, step: number): Promise<boolean> {
  return (await useStepStatement(em, { userId, step })).length > 0;
}

// On every sign-in with a code, inside its transaction: compiled once (db/prepared.ts), not built per sign-in.
const useStepStatement = prepared('totp_use_step', (db, $: Placeholder<{ userId: string; step: number }>) =>
  db
    .updateTable('user_totp')
    .set({ lastUsedStep: $('step') })
    .where('userId', '=', $('userId'))
    .where((eb) => eb.or([eb('lastUsedStep', 'is', null), eb('lastUsedStep', '<', $('step'))]))
    .returning('userId'),
);

/** Uses up a recovery code: false when the user has no such code (never had it, or it was used). */
export async function useRecoveryCode(em: EntityManager, userId: string, codeHash: string): Promise<boolean> {
  const result = await kysely(em).deleteFrom('mfa_recovery_codes').where('userId', '=', userId).where('codeHash', '=', codeHash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The user's recovery codes become these; the old ones stop working (call inside a transaction). */
export async function replaceRecoveryCodes(em: EntityManager, userId: string, codeHashes: readonly string[], now: Date): Promise<void> {
  await kysely(em).deleteFrom('mfa_recovery_codes').where('userId', '=', userId).execute();
  await kysely(em)
    .insertInto('mfa_recovery_codes')
    .values(codeHashes.map((codeHash) => ({ userId, codeHash, createdAt: now })))
    .execute();
}

export async function countRecoveryCodes(em: EntityManager, userId: string): Promise<number> {
  const row = await kysely(em)
    .selectFrom('mfa_recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('userId', '=', userId)
    .executeTakeFirstOrThrow();
  return row.count;
}

/** Forgets the user's key and recovery codes: two-factor off, or the user deleted (call inside a transaction). */
export async function deleteMfa(em: EntityManager, userId: string): Promise<void> {
  await kysely(em).deleteFrom('user_totp').where('userId', '=', userId).execute();
  await kysely(em).deleteFrom('mfa_recovery_codes').where('userId', '=', userId).execute();
}
