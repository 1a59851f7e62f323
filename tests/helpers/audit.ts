// Test shortcuts for the audit log: its rows as stored, read straight from the database.
import { sql } from 'kysely';
import { kysely } from '../../src/db/kysely.ts';
import type { StoredAuditEntry } from '../../src/services/audit/store.ts';
import type { TestService } from './service.ts';

export type AuditRowFilter = { type?: string; targetId?: string; requestId?: string; actor?: string };

/** The stored entries matching `filter`, in the order they were written. */
export async function auditRows(svc: TestService, filter: AuditRowFilter = {}): Promise<StoredAuditEntry[]> {
  let q = kysely(svc.deps.orm.em.fork()).selectFrom('audit_entries').selectAll();
  if (filter.type !== undefined) q = q.where('type', '=', filter.type);
  if (filter.targetId !== undefined) q = q.where('targetId', '=', filter.targetId);
  if (filter.requestId !== undefined) q = q.where('requestId', '=', filter.requestId);
  if (filter.actor !== undefined) q = q.where('actor', '=', filter.actor);
  return q.orderBy('id').execute();
}

export async function auditCount(svc: TestService): Promise<number> {
  const row = await kysely(svc.deps.orm.em.fork())
    .selectFrom('audit_entries')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Midnight (UTC) thirty days ago: seeded entries start here, well inside AUDIT_RETENTION_DAYS, so the
 * housekeeping run a service makes at boot never purges them under a test.
 */
export const RECENT = Math.floor((Date.now() - 30 * 86_400_000) / 86_400_000) * 86_400_000;

/** The time `ms` after RECENT, as a Date and as the API writes it. */
export const at = (ms: number) => new Date(RECENT + ms);
export const iso = (ms: number) => at(ms).toISOString();

export type Seed = {
  count: number;
  /** Every entry's actor (so a test can find its own with the actor filter). */
  actor: string;
  /** Types to cycle through. */
  types?: readonly string[];
  /** The first entry's time; each next one is `stepMs` later. */
  start?: Date;
  stepMs?: number;
  /** Targets cycle through this many ids (`<actor>-t<n>`). */
  targets?: number;
  /** Characters of padding in each entry's data, to make entries heavy. */
  pad?: number;
};

/** Inserts `count` entries in one statement (generate_series), then refreshes the planner's statistics. */
export async function seedAuditEntries(svc: TestService, seed: Seed): Promise<void> {
  const types = seed.types ?? ['approval.created', 'auth.login_failed', 'user.updated', 'session.revoked'];
  const start = seed.start ?? at(0);
  const db = kysely(svc.deps.orm.em.fork());
  // Raw SQL: a set-returning insert the query builder cannot express as one statement.
  await sql`
    insert into audit_entries (occurred_at, type, category, actor, actor_type, ip_address, target_type, target_id, data)
    select ${start}::timestamptz + (i * ${seed.stepMs ?? 1000} * interval '1 millisecond'),
           (${types}::text[])[1 + i % ${types.length}],
           split_part((${types}::text[])[1 + i % ${types.length}], '.', 1),
           ${seed.actor}, 'user', '192.0.2.1', 'approval',
           ${seed.actor} || '-t' || (i % ${seed.targets ?? 10}),
           jsonb_build_object('n', i, 'pad', repeat('x', ${seed.pad ?? 0}))
    from generate_series(0, ${seed.count - 1}) as i`.execute(db);
  await sql`analyze audit_entries`.execute(db);
}
