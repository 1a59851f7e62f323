// The audit area's one store: appending entries, pages and exports in (occurred_at, id) order, the export slot, retention.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Insertable, Kysely } from 'kysely';
import { kysely, type DB, type Stored } from '../../db/kysely.ts';

export type StoredAuditEntry = Stored<'audit_entries'>;
export type NewAuditEntry = Omit<StoredAuditEntry, 'id' | 'category'>;

/** A `type` filter: one type, or every type that starts with a prefix ending in `.`. */
export type TypeFilter = { exact: string } | { prefix: string };

export type AuditQuery = {
  type?: TypeFilter | undefined;
  actor?: string | undefined;
  targetId?: string | undefined;
  /** Inclusive. */
  since?: Date | undefined;
  /** Exclusive. */
  until?: Date | undefined;
};

/** A keyset position: the last entry of the previous page. */
export type AuditPosition = { occurredAt: Date; id: number };

/** The type up to its first dot: what the category column and index hold. */
export function categoryOf(type: string): string {
  const dot = type.indexOf('.');
  return dot < 0 ? type : type.slice(0, dot);
}

/** The row of an entry, with the category its type implies. */
export function auditRow(entry: NewAuditEntry): Insertable<DB['audit_entries']> {
  return { ...entry, category: categoryOf(entry.type) };
}

export async function insertAuditEntry(em: EntityManager, entry: NewAuditEntry): Promise<void> {
  await kysely(em).insertInto('audit_entries').values(auditRow(entry)).execute();
}

/** The entries `query` matches, as a query to order and page; every filter is served by an index in (occurred_at, id) order. */
function matching(db: Kysely<DB>, query: AuditQuery) {
  let q = db.selectFrom('audit_entries');
  const type = query.type;
  if (type !== undefined && 'exact' in type) q = q.where('type', '=', type.exact);
  if (type !== undefined && 'prefix' in type) {
    const category = categoryOf(type.prefix);
    q = q.where('category', '=', category);
    // `auth.` is exactly the category; a longer prefix (`a.b.`) narrows it further.
    if (type.prefix !== `${category}.`) q = q.where((eb) => eb.fn<boolean>('starts_with', [eb.ref('type'), eb.val(type.prefix)]));
  }
  if (query.actor !== undefined) q = q.where('actor', '=', query.actor);
  if (query.targetId !== undefined) q = q.where('targetId', '=', query.targetId);
  if (query.since !== undefined) q = q.where('occurredAt', '>=', query.since);
  if (query.until !== undefined) q = q.where('occurredAt', '<', query.until);
  return q;
}

/** The query of a page: up to `fetch` entries, newest first, after `after` when given (docs/audit.md shows its plans). */
export function auditPageQuery(em: EntityManager, query: AuditQuery, after: AuditPosition | null, fetch: number) {
  let q = matching(kysely(em), query).selectAll();
  if (after !== null) q = q.where((eb) => eb(eb.refTuple('occurredAt', 'id'), '<', eb.tuple(after.occurredAt, after.id)));
  return q.orderBy('occurredAt', 'desc').orderBy('id', 'desc').limit(fetch);
}

export async function auditPage(em: EntityManager, query: AuditQuery, after: AuditPosition | null, fetch: number): Promise<StoredAuditEntry[]> {
  return auditPageQuery(em, query, after, fetch).execute();
}

// The lock space of export slots (two-key advisory locks: this constant, and a hash of the user id).
const EXPORT_LOCK_SPACE = 0x61756478;

/**
 * Takes the export slot of `userId` for the rest of the current transaction: false when another export of
 * that user holds it, on any instance. The database releases it when the transaction ends, however it ends
 * (commit, rollback, a dropped connection, a killed process), so no slot outlives its export.
 */
export async function tryTakeExportSlot(em: EntityManager, userId: string): Promise<boolean> {
  const row = await kysely(em)
    .selectNoFrom((eb) => eb.fn<boolean>('pg_try_advisory_xact_lock', [eb.val(EXPORT_LOCK_SPACE), eb.fn('hashtext', [eb.val(userId)])]).as('taken'))
    .executeTakeFirst();
  return row?.taken === true;
}

/** An entry as the export reads it: its time in epoch milliseconds, `data` as PostgreSQL's JSON text of it. */
export type ExportRow = Omit<StoredAuditEntry, 'occurredAt' | 'data' | 'category'> & { occurredAtMs: number; data: string };

/**
 * Up to `limit` matching entries after `after`, oldest first, for the export. `data` comes as text and the time
 * as a number, so that the service writes each line without parsing and re-serialising the entry.
 */
export async function exportBatch(em: EntityManager, query: AuditQuery, after: AuditPosition | null, limit: number): Promise<ExportRow[]> {
  let q = matching(kysely(em), query);
  if (after !== null) q = q.where((eb) => eb(eb.refTuple('occurredAt', 'id'), '>', eb.tuple(after.occurredAt, after.id)));
  return q
    .select((eb) => [
      'id',
      // Seconds with their milliseconds as a double; the cast to bigint rounds away its representation error.
      eb.cast<number>(eb(eb.fn('date_part', [eb.val('epoch'), eb.ref('occurredAt')]), '*', 1000), 'bigint').as('occurredAtMs'),
      'type',
      'actor',
      'actorType',
      'apiKeyId',
      'ipAddress',
      'requestId',
      'targetType',
      'targetId',
      eb.cast<string>(eb.ref('data'), 'text').as('data'),
    ])
    .orderBy('occurredAt')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Deletes up to `limit` of the oldest entries from before `cutoff`; returns how many. */
export async function purgeAuditEntriesBefore(em: EntityManager, cutoff: Date, limit: number): Promise<number> {
  const db = kysely(em);
  const oldest = db.selectFrom('audit_entries').select('id').where('occurredAt', '<', cutoff).orderBy('occurredAt').limit(limit);
  const deleted = await db.deleteFrom('audit_entries').where('id', 'in', oldest).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
