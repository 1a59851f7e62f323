// The audit area's one store: appending entries, pages and exports in (occurred_at, id) order, the export slot, retention.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, type CompiledQuery, type Expression, type Insertable, type Kysely } from 'kysely';
import type { QueryResultRow } from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { kysely, type DB, type Stored } from '../../db/kysely.ts';
import { nativePool } from '../../db/pool.ts';

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

/**
 * How a filter's value enters a statement: as a parameter, or as a setting of the transaction, read back by
 * current_setting(), for COPY, which takes no parameters (and into whose text no value of a client is pasted).
 */
type Values = { text(name: string, value: string): Expression<string>; time(name: string, value: Date): Expression<Date> };

const asParameters: Values = { text: (_name, value) => sql.val(value), time: (_name, value) => sql.val(value) };

/** The prefix of the export's settings (a custom setting's name needs a dot). */
const SETTING = 'audit_export.';

/** The export's setting `name`, read in the statement (its value is set by settingsStatement). */
const setting = (name: string) => sql<string>`current_setting(${sql.lit(SETTING + name)})`;

/** Values as settings; `settings` collects each one's name and text, for set_config() before the statement runs. */
function asSettings(settings: Map<string, string>): Values {
  return {
    text: (name, value) => (settings.set(name, value), setting(name)),
    time: (name, value) => (settings.set(name, value.toISOString()), sql<Date>`${setting(name)}::timestamptz`),
  };
}

/** The entries `query` matches, as a query to order and page; every filter is served by an index in (occurred_at, id) order. */
function matching(db: Kysely<DB>, query: AuditQuery, values: Values = asParameters) {
  let q = db.selectFrom('audit_entries');
  const type = query.type;
  if (type !== undefined && 'exact' in type) q = q.where('type', '=', values.text('type', type.exact));
  if (type !== undefined && 'prefix' in type) {
    const category = categoryOf(type.prefix);
    q = q.where('category', '=', values.text('category', category));
    // `auth.` is exactly the category; a longer prefix (`a.b.`) narrows it further.
    if (type.prefix !== `${category}.`) q = q.where((eb) => eb.fn<boolean>('starts_with', [eb.ref('type'), values.text('prefix', type.prefix)]));
  }
  if (query.actor !== undefined) q = q.where('actor', '=', values.text('actor', query.actor));
  if (query.targetId !== undefined) q = q.where('targetId', '=', values.text('target_id', query.targetId));
  if (query.since !== undefined) q = q.where('occurredAt', '>=', values.time('since', query.since));
  if (query.until !== undefined) q = q.where('occurredAt', '<', values.time('until', query.until));
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

/** Where an export batch ended (its last entry's time as the API writes it, and its id): the next batch starts after it. */
export type ExportPosition = { occurredAt: string; id: string };

/** What an export reads with, inside its transaction (inExportTransaction). */
export type ExportReader = {
  /**
   * Takes the export slot of `userId` for the rest of the transaction: false when another export of that user
   * holds it, on any instance. The database releases it when the transaction ends, however it ends (commit,
   * rollback, a dropped connection, a killed process), so no slot outlives its export.
   */
  takeSlot(userId: string): Promise<boolean>;
  /**
   * The binary COPY (exportLines.ts reads it) of the next `limit` matching entries after `after` (from the
   * first when null), oldest first, handed to `take` chunk by chunk as it arrives; resolves at its end.
   */
  batch(after: ExportPosition | null, take: (chunk: Buffer) => void): Promise<void>;
};

/**
 * Runs `read` in a repeatable-read, read-only transaction (one snapshot for every batch) on a pool connection
 * of its own: COPY needs the driver's connection, which the ORM's transactions keep to themselves. Each
 * batch is one COPY statement, inside STATEMENT_TIMEOUT_MS however long the export lasts, read to its end as
 * fast as it arrives (the export holds a batch's lines until the client takes them), so no statement waits
 * for a slow client. Filter values reach the statements as settings (set_config, with bind parameters), not
 * as SQL text: COPY takes no parameters. When `read` fails (the client went away)
 * with a COPY still arriving, the connection is closed instead of returned, which ends the statement and the
 * transaction; otherwise the transaction is rolled back and the connection returned.
 */
export async function inExportTransaction<T>(em: EntityManager, query: AuditQuery, limit: number, read: (reader: ExportReader) => Promise<T>): Promise<T> {
  const db = kysely(em);
  const filters = new Map<string, string>();
  const first = exportCopyStatement(db, query, filters, false, limit);
  // The same filters, read from the settings set once for the transaction: what this one collects is not needed.
  const next = exportCopyStatement(db, query, new Map(), true, limit);
  const client = await (await nativePool(em)).connect();
  let copying = 0;
  const run = <R extends QueryResultRow>(statement: CompiledQuery<R>) => client.query<R>(statement.sql, [...statement.parameters]);
  const copy = async (text: string, take: (chunk: Buffer) => void) => {
    copying++;
    const stream = client.query(copyTo(text));
    try {
      for await (const chunk of stream) {
        if (!Buffer.isBuffer(chunk)) throw new Error('a COPY stream gave something other than bytes');
        take(chunk);
      }
    } finally {
      // pg arms a read timer (query_timeout) for every query and clears it through the query's callback, which a
      // COPY stream never calls: left armed, it would fail the finished stream seconds later.
      if ('callback' in stream && typeof stream.callback === 'function') Reflect.apply(stream.callback, stream, [null]);
    }
    copying--;
  };
  try {
    await client.query('begin isolation level repeatable read, read only');
    if (filters.size > 0) await run(settingsStatement(db, filters));
    const result = await read({
      async takeSlot(userId) {
        const slot = db.selectNoFrom((eb) => eb.fn<boolean>('pg_try_advisory_xact_lock', [eb.val(EXPORT_LOCK_SPACE), eb.fn('hashtext', [eb.val(userId)])]).as('taken'));
        const { rows } = await run(slot.compile());
        return rows[0]?.taken === true;
      },
      async batch(after, take) {
        if (after === null) return copy(first, take);
        await run(settingsStatement(db, new Map([['after_at', after.occurredAt], ['after_id', after.id]])));
        return copy(next, take);
      },
    });
    await client.query('commit');
    client.release();
    return result;
  } catch (error) {
    if (copying > 0) {
      client.release(true);
    } else {
      await client.query('rollback').then(
        () => client.release(),
        () => client.release(true),
      );
    }
    throw error;
  }
}

/** `copy (…) to stdout (format binary)` of the export's columns (exportLines.ts: EXPORT_COLUMNS), its values as settings. */
function exportCopyStatement(db: Kysely<DB>, query: AuditQuery, settings: Map<string, string>, afterPosition: boolean, limit: number): string {
  let q = matching(db, query, asSettings(settings)).select((eb) => [
    eb.cast<string>('id', 'text').as('idText'),
    'occurredAt',
    'type',
    'actor',
    'actorType',
    eb.cast<string>('apiKeyId', 'text').as('apiKeyIdText'),
    'ipAddress',
    'requestId',
    'targetType',
    'targetId',
    'data',
  ]);
  if (afterPosition) {
    q = q.where((eb) => eb(eb.refTuple('occurredAt', 'id'), '>', eb.tuple(sql<Date>`${setting('after_at')}::timestamptz`, sql<number>`${setting('after_id')}::bigint`)));
  }
  const compiled = q.orderBy('occurredAt').orderBy('id').limit(sql.lit(limit)).compile();
  if (compiled.parameters.length > 0) throw new Error('an export statement takes its values as settings, not as parameters');
  return `copy (${compiled.sql}) to stdout (format binary)`;
}

/** One statement setting each of `settings` for the rest of the transaction. */
function settingsStatement(db: Kysely<DB>, settings: Map<string, string>): CompiledQuery {
  return db.selectNoFrom((eb) => [...settings].map(([name, value], i) => eb.fn<string>('set_config', [eb.val(SETTING + name), eb.val(value), eb.lit(true)]).as(`s${String(i)}`))).compile();
}

/** Deletes up to `limit` of the oldest entries from before `cutoff`; returns how many. */
export async function purgeAuditEntriesBefore(em: EntityManager, cutoff: Date, limit: number): Promise<number> {
  const db = kysely(em);
  const oldest = db.selectFrom('audit_entries').select('id').where('occurredAt', '<', cutoff).orderBy('occurredAt').limit(limit);
  const deleted = await db.deleteFrom('audit_entries').where('id', 'in', oldest).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
