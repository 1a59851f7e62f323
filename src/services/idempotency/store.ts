// The idempotency_keys table: claiming a key, reading a claim, completing and releasing it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { kysely, type Stored } from '../../db/kysely.ts';

export type IdempotencyRecord = Stored<'idempotency_keys'>;

export type Claim = {
  userId: string;
  key: string;
  operation: string;
  fingerprint: string;
  now: Date;
  leaseUntil: Date;
  expiresAt: Date;
};

/**
 * Takes the key for this request: a new key, or one whose 24 h are over, or one whose first request died
 * without finishing (lease passed). Returns false when another request holds or has completed it.
 */
export async function claimKey(em: EntityManager, claim: Claim): Promise<boolean> {
  // A new claim and a taken-over one leave the row the same: this request's, in flight, no response yet.
  const fresh = {
    operation: claim.operation,
    fingerprint: claim.fingerprint,
    response: null,
    createdAt: claim.now,
    leaseUntil: claim.leaseUntil,
    expiresAt: claim.expiresAt,
  };
  const claimed = await kysely(em)
    .insertInto('idempotency_keys')
    .values({ userId: claim.userId, key: claim.key, ...fresh })
    .onConflict((oc) =>
      oc
        .columns(['userId', 'key'])
        .doUpdateSet(fresh)
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.expiresAt', '<=', claim.now),
            eb.and([eb('idempotency_keys.response', 'is', null), eb('idempotency_keys.leaseUntil', '<=', claim.now)]),
          ]),
        ),
    )
    .returning('userId')
    .executeTakeFirst();
  return claimed !== undefined;
}

export async function findKey(em: EntityManager, userId: string, key: string): Promise<IdempotencyRecord | undefined> {
  return kysely(em).selectFrom('idempotency_keys').selectAll().where('userId', '=', userId).where('key', '=', key).executeTakeFirst();
}

/** Stores the first result; runs in the transaction of the change itself, so both commit or neither. */
export async function completeKey(em: EntityManager, userId: string, key: string, response: unknown): Promise<void> {
  // Encoded here, as pg would send an array as a PostgreSQL array and a string as bare text; null stays SQL NULL.
  const json = response == null ? null : JSON.stringify(response);
  await kysely(em).updateTable('idempotency_keys').set({ response: json }).where('userId', '=', userId).where('key', '=', key).execute();
}

/** Gives a failed request's key back, so a corrected retry with the same key runs. */
export async function releaseKey(em: EntityManager, userId: string, key: string, fingerprint: string): Promise<void> {
  await kysely(em)
    .deleteFrom('idempotency_keys')
    .where('userId', '=', userId)
    .where('key', '=', key)
    .where('fingerprint', '=', fingerprint)
    .where('response', 'is', null)
    .execute();
}

/** Housekeeping: keys past their 24 h. */
export async function purgeExpiredKeys(em: EntityManager, now: Date): Promise<number> {
  const result = await kysely(em).deleteFrom('idempotency_keys').where('expiresAt', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
