// Reading the audit log (CONTRACT §4.13): pages newest first, an export streamed oldest first, and its retention.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Actor } from '../../contracts/actor.ts';
import type { AuditEntry, AuditFilters, ListAuditInput } from '../../contracts/audit.ts';
import { DEFAULT_PAGE_SIZE, type Pagination } from '../../contracts/pagination.ts';
import { ApiError } from '../../errors.ts';
import { decodeCursor, toPage } from '../pagination.ts';
import { CopyLines } from './exportLines.ts';
import * as store from './store.ts';

/** Cursor namespace of GET /audit (a cursor of another list is refused). */
export const AUDIT_LIST = 'audit';

/**
 * Entries an export reads per statement: enough to keep statements few, little enough that the two batches
 * held at once (one being written, the next read meanwhile) stay a few MiB.
 */
const EXPORT_BATCH = 2000;

const Position = z.tuple([z.iso.datetime({ precision: 3 }), z.int().positive()]);

/** The one mapping from a stored entry to the wire (the export writes the same JSON from the database's bytes: exportLines.ts). */
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
 * client can take more. The entries are read in keyset batches (store.ts: inExportTransaction, one snapshot
 * for all of them), the next one read while the last is written, so memory stays at two batches whatever the
 * count; a batch's lines are written from the database's bytes (exportLines.ts). The transaction also holds
 * the caller's export slot: a second export of the same user meanwhile, on any instance, is 429/5002
 * (CONTRACT §5), whether or not RATE_LIMITS_ENABLED. When `write` fails (the client went away) no further
 * batch is read and the connection is freed. Nothing is written before the slot is taken, so a refusal is
 * an ordinary error response.
 */
export async function exportAudit(
  { em, actor }: { em: EntityManager; actor: Actor },
  filters: AuditFilters,
  write: (chunk: Uint8Array) => Promise<void>,
): Promise<void> {
  await store.inExportTransaction(em, queryOf(filters), EXPORT_BATCH, async (reader) => {
    if (!(await reader.takeSlot(actor.userId))) throw ApiError.rateLimited(5002, 1, 'an audit export of yours is still running');
    // A batch's lines are made as its rows arrive; the next batch is asked for before this one is written.
    const read = (after: store.ExportPosition | null) => {
      const lines = new CopyLines();
      return reader.batch(after, (chunk) => lines.push(chunk)).then(() => lines.end());
    };
    let batch = await read(null);
    for (;;) {
      const next = batch.count === EXPORT_BATCH && batch.last ? read(batch.last) : null;
      try {
        for (const chunk of batch.lines) await write(chunk);
      } catch (error) {
        // The read already under way ends with the connection; its outcome no longer matters.
        next?.catch(() => {});
        throw error;
      }
      if (next === null) return;
      batch = await next;
    }
  });
}

/** Deletes up to `limit` entries older than AUDIT_RETENTION_DAYS at `now` (the housekeeping job's task); returns how many. */
export async function purgeExpiredAuditEntries(em: EntityManager, now: Date, retentionDays: number, limit: number): Promise<number> {
  return store.purgeAuditEntriesBefore(em, new Date(now.getTime() - retentionDays * 24 * 3600 * 1000), limit);
}
