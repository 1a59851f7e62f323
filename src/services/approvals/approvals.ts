// Approvals: creating, listing and reading them with expiry evaluated in SQL, and deciding them by compare-and-set.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Actor } from '../../context/index.ts';
import type { Deps } from '../../context/deps.ts';
import { sqlRows } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import { assertIfMatch, etagOf } from '../etag.ts';
import { DEFAULT_PAGE_SIZE, decodeCursor, toPage, type Pagination } from '../pagination.ts';
import { expireOverdueApprovals } from './expiry.ts';

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];
export const URGENCY_LEVELS = ['critical', 'high', 'normal', 'no_expiry'] as const;
export type UrgencyLevel = (typeof URGENCY_LEVELS)[number];

export const MIN_TTL_SECONDS = 60;
export const MAX_TTL_SECONDS = 604_800;
export const MAX_METADATA_KEYS = 20;
const CRITICAL_WITHIN_S = 3600;
const HIGH_WITHIN_S = 14_400;

/** Cursor namespace of GET /approvals (a cursor of another list is refused). */
export const APPROVALS_LIST = 'approvals';

/** An approvals row with its timestamps as Dates (see readRows). */
export type ApprovalRow = {
  id: string;
  action_type: string;
  title: string;
  description: string;
  requested_by_id: string;
  requested_by: string;
  risk_level: RiskLevel;
  status: ApprovalStatus;
  created_at: Date;
  expires_at: Date | null;
  decided_at: Date | null;
  decided_by_id: string | null;
  decided_by: string | null;
  decision_reason: string | null;
  task_id: string | null;
  metadata: Record<string, string>;
};

type StoredApproval = Omit<ApprovalRow, 'created_at' | 'expires_at' | 'decided_at'> & {
  created_at: Date | string;
  expires_at: Date | string | null;
  decided_at: Date | string | null;
};

const date = (value: Date | string) => (value instanceof Date ? value : new Date(value));
const optionalDate = (value: Date | string | null) => (value === null ? null : date(value));

/** Approval rows of a query; the driver hands timestamptz over as text, the rules want Dates. */
async function readRows(em: EntityManager, query: string, params: readonly unknown[]): Promise<ApprovalRow[]> {
  const rows = await sqlRows<StoredApproval>(em, query, params);
  return rows.map((row) => ({ ...row, created_at: date(row.created_at), expires_at: optionalDate(row.expires_at), decided_at: optionalDate(row.decided_at) }));
}

export type ApprovalResponse = {
  id: string;
  action_type: string;
  title: string;
  description: string;
  requested_by: string;
  risk_level: RiskLevel;
  status: ApprovalStatus;
  created_at: string;
  expires_at: string | null;
  decided_at: string | null;
  decided_by: string | null;
  decision_reason: string | null;
  task_id: string | null;
  metadata: Record<string, string>;
  seconds_remaining: number | null;
  urgency_level: UrgencyLevel;
};

export type CreateApprovalInput = {
  action_type: string;
  title: string;
  description: string;
  risk_level: RiskLevel;
  ttl_seconds?: number | null | undefined;
  task_id?: string | null | undefined;
  metadata?: Record<string, string> | undefined;
};

export type ListApprovalsInput = {
  status?: ApprovalStatus | null | undefined;
  risk_level?: RiskLevel | null | undefined;
  action_type?: string | null | undefined;
  cursor?: string | null | undefined;
  limit?: number | null | undefined;
};

export type DecisionInput = {
  approvalId: string;
  decision: 'approved' | 'rejected';
  reason: string | null;
  /** The request's If-Match header, if any. */
  ifMatch?: string | undefined;
};

/** A pending approval whose deadline has passed is expired, whether or not a sweep has written it yet. */
export function effectiveStatus(row: Pick<ApprovalRow, 'status' | 'expires_at'>, now: Date): ApprovalStatus {
  return row.status === 'pending' && row.expires_at !== null && row.expires_at.getTime() <= now.getTime() ? 'expired' : row.status;
}

export function urgencyOf(secondsRemaining: number | null): UrgencyLevel {
  if (secondsRemaining === null) return 'no_expiry';
  if (secondsRemaining <= CRITICAL_WITHIN_S) return 'critical';
  if (secondsRemaining <= HIGH_WITHIN_S) return 'high';
  return 'normal';
}

/** The approval as stored, without the countdown: what its ETag is computed from. */
function stateOf(row: ApprovalRow, now: Date): Omit<ApprovalResponse, 'seconds_remaining' | 'urgency_level'> {
  return {
    id: row.id,
    action_type: row.action_type,
    title: row.title,
    description: row.description,
    requested_by: row.requested_by,
    risk_level: row.risk_level,
    status: effectiveStatus(row, now),
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    decided_at: row.decided_at?.toISOString() ?? null,
    decided_by: row.decided_by,
    decision_reason: row.decision_reason,
    task_id: row.task_id,
    metadata: row.metadata,
  };
}

export function toApprovalResponse(row: ApprovalRow, now: Date): ApprovalResponse {
  const state = stateOf(row, now);
  let secondsRemaining: number | null = null;
  if (row.expires_at !== null) {
    // Rounded up, so 0 means "no time left" and never shows on an approval that can still be decided.
    secondsRemaining = state.status === 'pending' ? Math.max(0, Math.ceil((row.expires_at.getTime() - now.getTime()) / 1000)) : 0;
  }
  return { ...state, seconds_remaining: secondsRemaining, urgency_level: urgencyOf(secondsRemaining) };
}

/**
 * The approval's ETag. It covers the stored state but not the countdown, which changes every second and
 * would otherwise make every If-Match on an expiring approval stale by the time it arrives.
 */
export function approvalEtag(row: ApprovalRow, now: Date): string {
  return etagOf(stateOf(row, now));
}

/** If-Match for decisions compares against approvalEtag, the tag GET /approvals/{id} sends. */
function assertApprovalIfMatch(ifMatch: string | undefined, row: ApprovalRow, now: Date): void {
  assertIfMatch(ifMatch, stateOf(row, now));
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function findApproval(em: EntityManager, id: string): Promise<ApprovalRow> {
  // Ids are UUIDs; anything else cannot exist, and must not reach a uuid column as a cast error.
  const [row] = UUID_PATTERN.test(id) ? await readRows(em, 'select * from approvals where id = ?', [id]) : [];
  if (!row) throw ApiError.notFound('approval not found');
  return row;
}

export async function createApproval(em: EntityManager, deps: Deps, actor: Actor, input: CreateApprovalInput): Promise<ApprovalResponse> {
  const now = deps.clock.now();
  const ttl = input.ttl_seconds ?? null;
  const expiresAt = ttl === null ? null : new Date(now.getTime() + ttl * 1000);
  const [row] = await readRows(
    em,
    `insert into approvals (id, action_type, title, description, requested_by_id, requested_by, risk_level, status,
                            created_at, expires_at, task_id, metadata)
     values (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?::jsonb) returning *`,
    [
      randomUUID(),
      input.action_type,
      input.title,
      input.description,
      actor.userId,
      actor.username,
      input.risk_level,
      now,
      expiresAt,
      input.task_id ?? null,
      JSON.stringify(input.metadata ?? {}),
    ],
  );
  if (!row) throw new Error('insert returned no row');
  return toApprovalResponse(row, now);
}

export async function getApproval(em: EntityManager, deps: Deps, approvalId: string): Promise<{ approval: ApprovalResponse; etag: string }> {
  const now = deps.clock.now();
  const row = await findApproval(em, approvalId);
  if (row.status !== effectiveStatus(row, now)) await expireOverdueApprovals(em, now, [row.id]);
  return { approval: toApprovalResponse(row, now), etag: approvalEtag(row, now) };
}

const ApprovalsCursor = z.tuple([z.iso.datetime(), z.string().regex(UUID_PATTERN)]);

/** Newest first (`created_at desc, id desc`), keyset-paginated; the status filter is the effective status. */
export async function listApprovals(
  em: EntityManager,
  deps: Deps,
  input: ListApprovalsInput,
): Promise<{ items: ApprovalResponse[]; pagination: Pagination }> {
  const now = deps.clock.now();
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const where: string[] = [];
  const params: unknown[] = [];
  switch (input.status) {
    case 'pending':
      where.push(`status = 'pending' and (expires_at is null or expires_at > ?)`);
      params.push(now);
      break;
    case 'expired':
      where.push(`(status = 'expired' or (status = 'pending' and expires_at <= ?))`);
      params.push(now);
      break;
    case 'approved':
    case 'rejected':
      where.push('status = ?');
      params.push(input.status);
      break;
    default:
      break;
  }
  if (input.risk_level) {
    where.push('risk_level = ?');
    params.push(input.risk_level);
  }
  if (input.action_type) {
    where.push('action_type = ?');
    params.push(input.action_type);
  }
  if (input.cursor) {
    const position = ApprovalsCursor.safeParse(decodeCursor(deps.secret, APPROVALS_LIST, input.cursor));
    if (!position.success) throw ApiError.badRequest('query.cursor: invalid or expired cursor');
    const [createdAt, id] = position.data;
    where.push('(created_at, id) < (?::timestamptz, ?::uuid)');
    params.push(new Date(createdAt), id);
  }
  const rows = await readRows(
    em,
    `select * from approvals ${where.length > 0 ? `where ${where.join(' and ')}` : ''}
      order by created_at desc, id desc limit ?`,
    [...params, limit + 1],
  );
  const overdue = rows.filter((row) => row.status !== effectiveStatus(row, now)).map((row) => row.id);
  if (overdue.length > 0) await expireOverdueApprovals(em, now, overdue);
  return toPage(rows, {
    limit,
    secret: deps.secret,
    list: APPROVALS_LIST,
    positionOf: (row) => [row.created_at.toISOString(), row.id],
    toItem: (row) => toApprovalResponse(row, now),
  });
}

/**
 * Approves or rejects: one compare-and-set UPDATE that only matches a pending, unexpired approval, so of
 * any number of concurrent decisions exactly one wins and the others see 409.
 */
export async function decideApproval(em: EntityManager, deps: Deps, actor: Actor, input: DecisionInput): Promise<ApprovalResponse> {
  const now = deps.clock.now();
  const row = await findApproval(em, input.approvalId);
  if (row.requested_by_id === actor.userId) throw ApiError.forbidden('the requester cannot decide their own approval');
  assertApprovalIfMatch(input.ifMatch, row, now);
  const [decided] = await readRows(
    em,
    `update approvals set status = ?, decided_at = ?, decided_by_id = ?, decided_by = ?, decision_reason = ?
      where id = ? and status = 'pending' and (expires_at is null or expires_at > ?)
      returning *`,
    [input.decision, now, actor.userId, actor.username, input.reason, row.id, now],
  );
  if (decided) return toApprovalResponse(decided, now);

  const current = await findApproval(em, row.id);
  const status = effectiveStatus(current, now);
  if (status === 'expired') {
    if (current.status === 'pending') await expireOverdueApprovals(em, now, [current.id]);
    throw ApiError.conflict('approval has expired');
  }
  throw ApiError.conflict(`approval is not pending (it is ${status})`);
}
