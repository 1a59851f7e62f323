// Reading the audit log (CONTRACT §4.13): pages newest first, an export streamed oldest first, and its retention.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Actor } from '../../contracts/actor.ts';
import type { AuditEntry, AuditFilters, ListAuditInput } from '../../contracts/audit.ts';
import { DEFAULT_PAGE_SIZE, type Pagination } from '../../contracts/pagination.ts';
import { ApiError } from '../../errors.ts';
import { decodeCursor, toPage } from '../pagination.ts';
import * as store from './store.ts';

/** Cursor namespace of GET /audit (a cursor of another list is refused). */
export const AUDIT_LIST = 'audit';

/** Entries an export reads per statement: enough to keep round trips few, little enough to hold two at once. */
const EXPORT_BATCH = 1000;
/**
 * Lines written at once. Each write is one string and one buffer of about 60 KB: below V8's large-object size,
 * so they die young with the batch instead of piling up in the old generation until a full collection.
 */
const LINES_PER_WRITE = 100;

const Position = z.tuple([z.iso.datetime({ precision: 3 }), z.int().positive()]);

/** The one mapping from a stored entry to the wire (the export writes the same JSON directly: toAuditLine). */
export function toAuditEntry(row: store.StoredAuditEntry): AuditEntry {
  return {
    id: String(row.id),
    occurred_at: row.occurredAt.toISOString(),
    type: row.type,
    actor: row.actor,
    actor_type: row.actorType,
    api_key_id: row.apiKeyId,
    ip_address: row.ipAddress,
    request_id: row.requestId,
    target_type: row.targetType,
    target_id: row.targetId,
    data: row.data,
  };
}

const json = (value: string | null) => (value === null ? 'null' : JSON.stringify(value));

/**
 * An entry as its export line: the JSON of toAuditEntry (same fields, same order), written out directly with
 * `data` as PostgreSQL's text of it, so an export neither parses nor re-serialises what it only passes on.
 */
export function toAuditLine(row: store.ExportRow): string {
  return (
    `{"id":"${String(row.id)}","occurred_at":"${new Date(row.occurredAtMs).toISOString()}","type":${json(row.type)},"actor":${json(row.actor)},` +
    `"actor_type":${json(row.actorType)},"api_key_id":${json(row.apiKeyId)},"ip_address":${json(row.ipAddress)},"request_id":${json(row.requestId)},` +
    `"target_type":${json(row.targetType)},"target_id":${json(row.targetId)},"data":${row.data}}`
  );
}

function queryOf(filters: AuditFilters): store.AuditQuery {
  const type = filters.type ?? undefined;
  return {
    type: type === undefined ? undefined : type.endsWith('.') ? { prefix: type } : { exact: type },
    actor: filters.actor ?? undefined,
    targetId: filters.target_id ?? undefined,
    since: filters.since ? new Date(filters.since) : undefined,
    until: filters.until ? new Date(filters.until) : undefined,
  };
}

/** Newest first (`occurred_at desc, id desc`), keyset-paginated, filtered. */
export async function listAudit({ em, secret }: { em: EntityManager; secret: Buffer }, input: ListAuditInput): Promise<{ items: AuditEntry[]; pagination: Pagination }> {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  let after: store.AuditPosition | null = null;
  if (input.cursor) {
    const position = Position.safeParse(decodeCursor(secret, AUDIT_LIST, input.cursor));
    if (!position.success) throw ApiError.badRequest('query.cursor: invalid or expired cursor');
    after = { occurredAt: new Date(position.data[0]), id: position.data[1] };
  }
  const rows = await store.auditPage(em, queryOf(input), after, limit + 1);
  return toPage(rows, { limit, secret, list: AUDIT_LIST, positionOf: (row) => [row.occurredAt.toISOString(), row.id], toItem: toAuditEntry });
}

/**
 * Writes every matching entry, oldest first, one JSON line each, through `write`, which resolves when the
 * client can take more. The entries are read in keyset batches, the next one read while the last is written,
 * so memory stays at two batches whatever the count. The batches share one repeatable-read transaction (one
 * snapshot: an entry committed meanwhile is not half in the export), which also holds the caller's export
 * slot: a second export of the same user meanwhile, on any instance, is 429/5002 (CONTRACT §5), whether or
 * not RATE_LIMITS_ENABLED. Each batch is an ordinary statement, inside STATEMENT_TIMEOUT_MS however long the
 * export lasts. When `write` fails (the client went away) no further batch is read, the transaction ends and
 * its connection returns to the pool. Nothing is written before the slot is taken, so a refusal is an
 * ordinary error response.
 */
export async function exportAudit(
  { em, actor }: { em: EntityManager; actor: Actor },
  filters: AuditFilters,
  write: (chunk: string) => Promise<void>,
): Promise<void> {
  const query = queryOf(filters);
  await em.transactional(
    async (tx) => {
      if (!(await store.tryTakeExportSlot(tx, actor.userId))) throw ApiError.rateLimited(5002, 1, 'an audit export of yours is still running');
      let batch = await store.exportBatch(tx, query, null, EXPORT_BATCH);
      for (;;) {
        const last = batch.length === EXPORT_BATCH ? batch.at(-1) : undefined;
        const next = last ? store.exportBatch(tx, query, { occurredAt: new Date(last.occurredAtMs), id: last.id }, EXPORT_BATCH) : null;
        try {
          for (let from = 0; from < batch.length; from += LINES_PER_WRITE) {
            const lines = batch.slice(from, from + LINES_PER_WRITE).map(toAuditLine);
            lines.push('');
            await write(lines.join('\n'));
          }
        } catch (error) {
          // The read already under way ends with the transaction; its outcome no longer matters.
          next?.catch(() => {});
          throw error;
        }
        if (next === null) return;
        batch = await next;
      }
    },
    { readOnly: true, isolationLevel: 'repeatable read' },
  );
}

/** Deletes up to `limit` entries older than AUDIT_RETENTION_DAYS at `now` (the housekeeping job's task); returns how many. */
export async function purgeExpiredAuditEntries(em: EntityManager, now: Date, retentionDays: number, limit: number): Promise<number> {
  return store.purgeAuditEntriesBefore(em, new Date(now.getTime() - retentionDays * 24 * 3600 * 1000), limit);
}
