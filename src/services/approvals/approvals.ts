// Approvals: creating, listing and reading them with expiry evaluated at the request's clock, and deciding them by compare-and-set.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import type { ApprovalResponse, CreateApprovalInput, ListApprovalsInput } from '../../contracts/approvals.ts';
import { assertIfMatch, etagOf } from '../etag.ts';
import { decodeCursor, toPage } from '../pagination.ts';
import { recordEvent } from '../../events/record.ts';
import { expireOverdueApprovals } from './expiry.ts';
import { effectiveStatus, toApprovalResponse } from './response.ts';
import * as store from './store.ts';
import type { StoredApproval } from './store.ts';
import type { Actor } from '../../contracts/actor.ts';
import type { Clock } from '../../contracts/clock.ts';
import { DEFAULT_PAGE_SIZE, type Pagination } from '../../contracts/pagination.ts';

/** Cursor namespace of GET /approvals (a cursor of another list is refused). */
export const APPROVALS_LIST = 'approvals';

export type DecisionInput = {
  approvalId: string;
  decision: 'approved' | 'rejected';
  reason: string | null;
  /** The request's If-Match header, if any. */
  ifMatch?: string | undefined;
};

/**
 * What the approval's ETag covers: the representation without the countdown, which changes every
 * second and would otherwise make every If-Match on an expiring approval stale by the time it arrives.
 */
function etagStateOf(approval: ApprovalResponse): Omit<ApprovalResponse, 'seconds_remaining' | 'urgency_level'> {
  const { seconds_remaining: _seconds, urgency_level: _urgency, ...state } = approval;
  return state;
}

// Ids are UUIDs; anything else cannot exist, and must not reach a uuid column as a cast error.
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function assertNotOwn(approval: StoredApproval, actor: Actor): void {
  if (approval.requestedById === actor.userId) throw ApiError.forbidden('the requester cannot decide their own approval');
}

async function findApproval(em: EntityManager, id: string): Promise<StoredApproval> {
  const approval = UUID_PATTERN.test(id) ? await store.findApproval(em, id) : undefined;
  if (!approval) throw ApiError.notFound('approval not found');
  return approval;
}

export async function createApproval(
  { em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor },
  input: CreateApprovalInput,
): Promise<ApprovalResponse> {
  const now = clock.now();
  const ttl = input.ttl_seconds ?? null;
  return em.transactional(async (tx) => {
    const approval = await store.insertApproval(tx, {
      id: randomUUID(),
      actionType: input.action_type,
      title: input.title,
      description: input.description,
      requestedById: actor.userId,
      requestedBy: actor.username,
      riskLevel: input.risk_level,
      createdAt: now,
      expiresAt: ttl === null ? null : new Date(now.getTime() + ttl * 1000),
      taskId: input.task_id ?? null,
      metadata: input.metadata ?? {},
    });
    const created = toApprovalResponse(approval, now);
    await recordEvent(tx, { type: 'approval.created', actor: actor.username, at: now, data: created });
    return created;
  });
}

/** The approval and its ETag; an overdue one read here is written down as expired. */
export async function getApproval({ em, clock }: { em: EntityManager; clock: Clock }, approvalId: string): Promise<{ approval: ApprovalResponse; etag: string }> {
  const now = clock.now();
  const stored = await findApproval(em, approvalId);
  if (stored.status !== effectiveStatus(stored, now)) await expireOverdueApprovals(em, now, [stored.id]);
  const approval = toApprovalResponse(stored, now);
  return { approval, etag: etagOf(etagStateOf(approval)) };
}

const ApprovalsCursor = z.tuple([z.iso.datetime(), z.string().regex(UUID_PATTERN)]);

/** Newest first (`created_at desc, id desc`), keyset-paginated; the status filter is the effective status. */
export async function listApprovals(
  { em, clock, secret }: { em: EntityManager; clock: Clock; secret: Buffer },
  input: ListApprovalsInput,
): Promise<{ items: ApprovalResponse[]; pagination: Pagination }> {
  const now = clock.now();
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  let after: store.ApprovalsQuery['after'];
  if (input.cursor) {
    const position = ApprovalsCursor.safeParse(decodeCursor(secret, APPROVALS_LIST, input.cursor));
    if (!position.success) throw ApiError.badRequest('query.cursor: invalid or expired cursor');
    const [createdAt, id] = position.data;
    after = { createdAt: new Date(createdAt), id };
  }
  const rows = await store.listApprovals(em, {
    now,
    status: input.status,
    riskLevel: input.risk_level,
    actionType: input.action_type,
    after,
    limit: limit + 1,
  });
  const overdue = rows.filter((row) => row.status !== effectiveStatus(row, now)).map((row) => row.id);
  if (overdue.length > 0) await expireOverdueApprovals(em, now, overdue);
  return toPage(rows, {
    limit,
    secret,
    list: APPROVALS_LIST,
    positionOf: (row) => [row.createdAt.toISOString(), row.id],
    toItem: (row) => toApprovalResponse(row, now),
  });
}

/**
 * Approves or rejects: one compare-and-set UPDATE that only matches a pending, unexpired approval, so of
 * any number of concurrent decisions exactly one wins and the others see 409.
 */
export async function decideApproval(
  { em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor },
  input: DecisionInput,
): Promise<ApprovalResponse> {
  const now = clock.now();
  if (input.ifMatch !== undefined) {
    // The decision is conditional on the state the client saw: read it first.
    const stored = await findApproval(em, input.approvalId);
    assertNotOwn(stored, actor);
    // The tag GET /approvals/{id} sent: the state at `now`, without the countdown.
    assertIfMatch(input.ifMatch, etagStateOf(toApprovalResponse(stored, now)));
  } else if (!UUID_PATTERN.test(input.approvalId)) {
    throw ApiError.notFound('approval not found');
  }
  // Without If-Match the conditional update is the only read of a decision that succeeds; why one was
  // refused is read only then (a round trip fewer on the hot path, bench/RESULTS.md).
  const decided = await em.transactional(async (tx) => {
    const row = await store.decideIfPending(
      tx,
      input.approvalId,
      { status: input.decision, decidedAt: now, decidedById: actor.userId, decidedBy: actor.username, decisionReason: input.reason },
      now,
    );
    if (!row) return undefined;
    const response = toApprovalResponse(row, now);
    await recordEvent(tx, { type: input.decision === 'approved' ? 'approval.approved' : 'approval.rejected', actor: actor.username, at: now, data: response });
    return response;
  });
  if (decided) return decided;

  const current = await findApproval(em, input.approvalId);
  assertNotOwn(current, actor);
  const status = effectiveStatus(current, now);
  if (status === 'expired') {
    if (current.status === 'pending') await expireOverdueApprovals(em, now, [current.id]);
    throw ApiError.conflict('approval has expired');
  }
  throw ApiError.conflict(`approval is not pending (it is ${status})`);
}
