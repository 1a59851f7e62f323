// The approvals table: every query of the approvals area, through the typed Kysely view of the entities.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, type Expression, type ExpressionBuilder } from 'kysely';
import type { ApprovalStatus, RiskLevel } from '../../contracts/values.ts';
import { kysely, type DB, type Stored } from '../../db/kysely.ts';
import { prepared, type Placeholder } from '../../db/prepared.ts';

/** An approval as stored: timestamps are Dates, metadata an object. */
export type StoredApproval = Stored<'approvals'>;

type Approvals = ExpressionBuilder<DB, 'approvals'>;

/** Still decidable at `now`: pending, and its deadline (if any) not reached. */
const decidable = (eb: Approvals, now: Date | Expression<Date>) =>
  // Literals, not parameters: the decision's statement is compiled once (db/prepared.ts) with only its values as those.
  eb.and([eb('status', '=', sql.lit('pending')), eb.or([eb('expiresAt', 'is', null), eb('expiresAt', '>', now)])]);

/** Pending in the table but past its deadline: expired, whether or not that has been written yet. */
const overdue = (eb: Approvals, now: Date) => eb.and([eb('status', '=', 'pending'), eb('expiresAt', '<=', now)]);

/** The rows whose effective status at `now` is `status` (expiry evaluated in the query). */
function effectiveStatusIs(eb: Approvals, status: ApprovalStatus, now: Date) {
  switch (status) {
    case 'pending':
      return decidable(eb, now);
    case 'expired':
      return eb.or([eb('status', '=', 'expired'), overdue(eb, now)]);
    case 'approved':
    case 'rejected':
      return eb('status', '=', status);
  }
}

/** Every column, as the writes of the hot path return an approval (prepared statements name what they return). */
const COLUMNS = [
  'id',
  'actionType',
  'title',
  'description',
  'requestedById',
  'requestedBy',
  'riskLevel',
  'status',
  'createdAt',
  'expiresAt',
  'decidedAt',
  'decidedById',
  'decidedBy',
  'decisionReason',
  'taskId',
  'metadata',
] as const satisfies readonly (keyof StoredApproval)[];

/** A new approval: pending, nobody's decision yet. */
export type NewApproval = Omit<StoredApproval, 'status' | 'decidedAt' | 'decidedById' | 'decidedBy' | 'decisionReason'>;

// Creating and deciding run on every approval's way: compiled once (db/prepared.ts), not built per request.
const insertStatement = prepared('approval_insert', (db, $: Placeholder<NewApproval>) =>
  db
    .insertInto('approvals')
    .values({
      id: $('id'),
      actionType: $('actionType'),
      title: $('title'),
      description: $('description'),
      requestedById: $('requestedById'),
      requestedBy: $('requestedBy'),
      riskLevel: $('riskLevel'),
      status: sql.lit('pending'),
      createdAt: $('createdAt'),
      expiresAt: $('expiresAt'),
      taskId: $('taskId'),
      metadata: $('metadata'),
    })
    .returning(COLUMNS),
);

export async function insertApproval(em: EntityManager, approval: NewApproval): Promise<StoredApproval> {
  const [row] = await insertStatement(em, approval);
  if (!row) throw new Error('the approval insert returned no row');
  return row;
}

export async function findApproval(em: EntityManager, id: string): Promise<StoredApproval | undefined> {
  return kysely(em).selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst();
}

export type ApprovalsQuery = {
  now: Date;
  status?: ApprovalStatus | null | undefined;
  riskLevel?: RiskLevel | null | undefined;
  actionType?: string | null | undefined;
  /** Keyset position: only rows that sort after it (newest first) are returned. */
  after?: { createdAt: Date; id: string } | undefined;
  limit: number;
};

/** Newest first (`created_at desc, id desc`), filtered; the status filter is the effective status at `now`. */
export async function listApprovals(em: EntityManager, query: ApprovalsQuery): Promise<StoredApproval[]> {
  return listQuery(em, query).execute();
}

/** The statement listApprovals runs, unexecuted, so the benchmark can EXPLAIN exactly it. */
export function listQuery(em: EntityManager, query: ApprovalsQuery) {
  const { now, status, riskLevel, actionType, after } = query;
  let select = kysely(em).selectFrom('approvals').selectAll();
  if (status) select = select.where((eb) => effectiveStatusIs(eb, status, now));
  if (riskLevel) select = select.where('riskLevel', '=', riskLevel);
  if (actionType) select = select.where('actionType', '=', actionType);
  if (after) select = select.where((eb) => eb(eb.refTuple('createdAt', 'id'), '<', eb.tuple(after.createdAt, after.id)));
  return select.orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(query.limit);
}

export type Decision = { status: 'approved' | 'rejected'; decidedAt: Date; decidedById: string; decidedBy: string; decisionReason: string | null };

/**
 * The compare-and-set of a decision: changes the approval only while it is still decidable at `now`.
 * Returns the decided row, or undefined when another decision or the deadline got there first.
 */
export async function decideIfPending(em: EntityManager, id: string, decision: Decision, now: Date): Promise<StoredApproval | undefined> {
  return (await decideStatement(em, { ...decision, id, now }))[0];
}

const decideStatement = prepared('approval_decide', (db, $: Placeholder<Decision & { id: string; now: Date }>) =>
  db
    .updateTable('approvals')
    .set({ status: $('status'), decidedAt: $('decidedAt'), decidedById: $('decidedById'), decidedBy: $('decidedBy'), decisionReason: $('decisionReason') })
    .where('id', '=', $('id'))
    .where((eb) => decidable(eb, $('now')))
    // Nobody decides their own request.
    .where('requestedById', '<>', $('decidedById'))
    .returning(COLUMNS),
);

/** Writes the given approvals expired if they are overdue at `now`; decided ones are left alone. */
export async function expireIfOverdue(em: EntityManager, ids: readonly string[], now: Date): Promise<StoredApproval[]> {
  if (ids.length === 0) return [];
  return kysely(em)
    .updateTable('approvals')
    .set({ status: 'expired' })
    .where('id', 'in', ids)
    .where((eb) => overdue(eb, now))
    .returningAll()
    .execute();
}

/**
 * Writes up to `batch` overdue approvals expired; rows a concurrent decision holds are skipped (they
 * are decided or met again by the next sweep), so the sweep never waits on one.
 */
export async function expireOverdueBatch(em: EntityManager, now: Date, batch: number): Promise<StoredApproval[]> {
  return kysely(em)
    .updateTable('approvals')
    .set({ status: 'expired' })
    .where('id', 'in', (eb) => eb.selectFrom('approvals').select('id').where((inner) => overdue(inner, now)).limit(batch).forUpdate().skipLocked())
    .where((eb) => overdue(eb, now))
    .returningAll()
    .execute();
}

/** The earliest deadline of a pending approval (overdue ones included), or null when no pending approval has one. */
export async function nextDeadline(em: EntityManager): Promise<Date | null> {
  const row = await kysely(em)
    .selectFrom('approvals')
    .select((eb) => eb.fn.min('expiresAt').as('at'))
    .where('status', '=', 'pending')
    .where('expiresAt', 'is not', null)
    .executeTakeFirst();
  return row?.at ?? null;
}

/** A wait in flight (CONTRACT §4.11): it counts toward its user's cap until it is released or `heldUntil` passes. */
export type WaitSlot = Stored<'approval_waits'>;

/**
 * Records a wait if its user holds fewer than `max` live ones (on any instance); false at the cap. Run it in a
 * transaction: the user's row is locked so that concurrent waits count each other.
 */
export async function takeWaitSlot(em: EntityManager, slot: WaitSlot, opts: { now: Date; max: number }): Promise<boolean> {
  const db = kysely(em);
  // Not FOR UPDATE: that would also hold up inserts that reference the user (sessions, tickets) meanwhile.
  await db.selectFrom('users').select('id').where('id', '=', slot.userId).forNoKeyUpdate().execute();
  const held = await db
    .selectFrom('approval_waits')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('userId', '=', slot.userId)
    .where('heldUntil', '>', opts.now)
    .executeTakeFirst();
  if (Number(held?.n ?? 0) >= opts.max) return false;
  await db.insertInto('approval_waits').values(slot).execute();
  return true;
}

export async function releaseWaitSlot(em: EntityManager, id: string): Promise<void> {
  await kysely(em).deleteFrom('approval_waits').where('id', '=', id).execute();
}

/** Forgets waits past their `heldUntil`: those of an instance that died (housekeeping). Returns how many. */
export async function purgeEndedWaits(em: EntityManager, now: Date): Promise<number> {
  const result = await kysely(em).deleteFrom('approval_waits').where('heldUntil', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
