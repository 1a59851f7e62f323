// The webhooks and webhook_deliveries tables: the only module that reads or writes them.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, type Expression, type Insertable, type Kysely, type Updateable } from 'kysely';
import { kysely, type DB, type Stored } from '../../db/kysely.ts';
import type { DeliveryStatus, DisabledReason } from '../../contracts/webhooks.ts';

export type StoredWebhook = Stored<'webhooks'>;
export type StoredDelivery = Stored<'webhook_deliveries'>;
/** A delivery as lists show it: with its event's public id (from the outbox until the body copied it). */
export type ListedDelivery = StoredDelivery & { publishedEventId: number | null };

/**
 * Serializes webhook creations, so the cap of 20 holds against concurrent creates. A transaction-level
 * advisory lock because there is no row to lock before the first webhook exists (Kysely has no builder for
 * the function call, hence the sql tag).
 */
const CREATE_LOCK = 4_711_020_466_198_133_337n;

export async function lockWebhookCreation(em: EntityManager): Promise<void> {
  await sql`select pg_advisory_xact_lock(${CREATE_LOCK})`.execute(kysely(em));
}

export async function countWebhooks(em: EntityManager): Promise<number> {
  const row = await kysely(em)
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertWebhook(em: EntityManager, webhook: Insertable<DB['webhooks']>): Promise<void> {
  await kysely(em).insertInto('webhooks').values(webhook).execute();
}

export async function findWebhook(em: EntityManager, id: string, opts: { forUpdate?: boolean } = {}): Promise<StoredWebhook | undefined> {
  let select = kysely(em).selectFrom('webhooks').selectAll().where('id', '=', id);
  if (opts.forUpdate === true) select = select.forUpdate();
  return select.executeTakeFirst();
}

type Position = { createdAt: Date; id: string };

/** One page newest first (created_at, id descending), after `after` when given. */
export async function webhookPage(em: EntityManager, query: { after: Position | null; fetch: number }): Promise<StoredWebhook[]> {
  let select = kysely(em).selectFrom('webhooks').selectAll();
  const after = query.after;
  if (after) select = select.where((eb) => eb(eb.refTuple('createdAt', 'id'), '<', eb.tuple(after.createdAt, after.id)));
  return select.orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(query.fetch).execute();
}

export async function updateWebhook(em: EntityManager, id: string, patch: Updateable<DB['webhooks']>): Promise<StoredWebhook | undefined> {
  return kysely(em).updateTable('webhooks').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Deletes the webhook and every delivery of it (queued jobs then find nothing and end); whether it existed. */
export async function deleteWebhook(em: EntityManager, id: string): Promise<StoredWebhook | undefined> {
  const db = kysely(em);
  await db.deleteFrom('webhook_deliveries').where('webhookId', '=', id).execute();
  return db.deleteFrom('webhooks').where('id', '=', id).returningAll().executeTakeFirst();
}

/**
 * The ids of the enabled webhooks subscribed to any of `eventTypes` (an event's type and `<channel>.*`; none for
 * an event that never leaves), as a subquery giving one array: the statement that records the event reads them
 * (events/store.ts).
 */
export function webhookIdsFor(db: Kysely<DB>, eventTypes: Expression<string[]>) {
  return db
    .selectFrom('webhooks')
    .select(sql<string[]>`coalesce(array_agg(webhooks.id), '{}')`.as('ids'))
    // A literal: the recording statement is compiled once, with only the event's values as parameters.
    .where('enabled', '=', sql.lit(true))
    .where('eventTypes', '&&', sql<StoredWebhook['eventTypes']>`${eventTypes}::text[]`);
}

export async function insertDeliveries(em: EntityManager, deliveries: Insertable<DB['webhook_deliveries']>[]): Promise<void> {
  if (deliveries.length === 0) return;
  await kysely(em).insertInto('webhook_deliveries').values(deliveries).execute();
}

export async function findDelivery(em: EntityManager, webhookId: string, id: string): Promise<StoredDelivery | undefined> {
  return kysely(em).selectFrom('webhook_deliveries').selectAll().where('webhookId', '=', webhookId).where('id', '=', id).executeTakeFirst();
}

/** One page of a webhook's deliveries newest first (created_at, id descending), optionally of one status. */
export async function deliveryPage(
  em: EntityManager,
  query: { webhookId: string; status: DeliveryStatus | null; after: Position | null; fetch: number },
): Promise<ListedDelivery[]> {
  let select = kysely(em)
    .selectFrom('webhook_deliveries as d')
    .leftJoin('events as e', 'e.rowId', 'd.eventRowId')
    .selectAll('d')
    .select('e.id as publishedEventId')
    .where('d.webhookId', '=', query.webhookId);
  if (query.status !== null) select = select.where('d.status', '=', query.status);
  const after = query.after;
  if (after) select = select.where((eb) => eb(eb.refTuple('d.createdAt', 'd.id'), '<', eb.tuple(after.createdAt, after.id)));
  return select.orderBy('d.createdAt', 'desc').orderBy('d.id', 'desc').limit(query.fetch).execute();
}

/** Fixes the bytes every attempt sends, unless another attempt fixed them first; the body that stands. */
export async function fixBody(em: EntityManager, id: string, body: string, eventId: string): Promise<string | null> {
  const db = kysely(em);
  const fixed = await db.updateTable('webhook_deliveries').set({ body, eventId }).where('id', '=', id).where('body', 'is', null).returning('body').executeTakeFirst();
  if (fixed) return fixed.body;
  const row = await db.selectFrom('webhook_deliveries').select('body').where('id', '=', id).executeTakeFirst();
  return row?.body ?? null;
}

/**
 * Takes the next attempt of a delivery for the job `jobId`: a compare-and-set on the attempts made, so of
 * two jobs queued for the same attempt (a retry and a redelivery) one makes it and the other ends. The job
 * that made the last attempt may make another (its worker died mid-attempt and the queue runs it again).
 * Returns the delivery with this attempt counted (its status still the one before it) and what the attempt
 * needs of its webhook, in one statement; undefined when the attempt is not this job's or the webhook is gone.
 */
export async function claimAttempt(
  em: EntityManager,
  claim: { id: string; expectedAttempts: number; jobId: string; now: Date },
): Promise<(StoredDelivery & { url: string; secret: string }) | undefined> {
  return kysely(em)
    .updateTable('webhook_deliveries as d')
    .from('webhooks as w')
    .set((eb) => ({ attempts: eb('d.attempts', '+', 1), lastAttemptAt: claim.now, nextAttemptAt: null, attemptJobId: claim.jobId }))
    .whereRef('w.id', '=', 'd.webhookId')
    .where('d.id', '=', claim.id)
    .where((eb) => eb.or([eb('d.attempts', '=', claim.expectedAttempts), eb('d.attemptJobId', '=', claim.jobId)]))
    .returningAll('d')
    .returning(['w.url', 'w.secret'])
    .executeTakeFirst();
}

/** Writes how an attempt ended. */
export async function settleAttempt(
  em: EntityManager,
  id: string,
  outcome: { status: DeliveryStatus; responseStatus: number | null; error: string | null; nextAttemptAt: Date | null; succeededAt: Date | null },
): Promise<void> {
  const patch: Updateable<DB['webhook_deliveries']> = {
    status: outcome.status,
    responseStatus: outcome.responseStatus,
    error: outcome.error,
    nextAttemptAt: outcome.nextAttemptAt,
  };
  if (outcome.succeededAt) patch.succeededAt = outcome.succeededAt;
  await kysely(em).updateTable('webhook_deliveries').set(patch).where('id', '=', id).execute();
}

/** Marks a delivery as due again now (a redelivery). */
export async function markDue(em: EntityManager, id: string, now: Date): Promise<void> {
  await kysely(em).updateTable('webhook_deliveries').set({ nextAttemptAt: now }).where('id', '=', id).execute();
}

/** A delivery of the webhook succeeded: the run of failures is over. */
export async function resetFailures(em: EntityManager, webhookId: string): Promise<void> {
  await kysely(em).updateTable('webhooks').set({ consecutiveFailures: 0 }).where('id', '=', webhookId).where('consecutiveFailures', '>', 0).execute();
}

/** A delivery of the webhook ended failed: the run of failures grows; its new length (undefined: webhook gone). */
export async function countFailure(em: EntityManager, webhookId: string): Promise<number | undefined> {
  const row = await kysely(em)
    .updateTable('webhooks')
    .set((eb) => ({ consecutiveFailures: eb('consecutiveFailures', '+', 1) }))
    .where('id', '=', webhookId)
    .returning('consecutiveFailures')
    .executeTakeFirst();
  return row?.consecutiveFailures;
}

/** Turns an enabled webhook off with its reason; the webhook when this call did it, undefined when it was off already. */
export async function disableWebhook(em: EntityManager, webhookId: string, reason: DisabledReason, now: Date): Promise<StoredWebhook | undefined> {
  return kysely(em)
    .updateTable('webhooks')
    .set({ enabled: false, disabledReason: reason, updatedAt: now })
    .where('id', '=', webhookId)
    .where('enabled', '=', true)
    .returningAll()
    .executeTakeFirst();
}

/** Deliveries still pending, on every instance: the queue depth metric. */
export async function countPendingDeliveries(em: EntityManager): Promise<number> {
  const row = await kysely(em)
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes at most `limit` deliveries created before `before` (housekeeping); how many. */
export async function purgeDeliveriesBefore(em: EntityManager, before: Date, limit: number): Promise<number> {
  const db = kysely(em);
  const doomed = db.selectFrom('webhook_deliveries').select('id').where('createdAt', '<', before).limit(limit);
  const result = await db.deleteFrom('webhook_deliveries').where('id', 'in', doomed).executeTakeFirst();
  return Number(result.numDeletedRows);
}
