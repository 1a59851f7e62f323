// An approval as the API shows it at a given moment: its effective status, countdown and urgency.
import type { ApprovalResponse } from '../../contracts/approvals.ts';
import type { ApprovalStatus } from '../../contracts/values.ts';
import type { StoredApproval } from './store.ts';

const CRITICAL_WITHIN_S = 3600;
const HIGH_WITHIN_S = 14_400;

/** A pending approval whose deadline has passed is expired, whether or not a sweep has written it yet. */
export function effectiveStatus(approval: Pick<StoredApproval, 'status' | 'expiresAt'>, now: Date): ApprovalStatus {
  return approval.status === 'pending' && approval.expiresAt !== null && approval.expiresAt.getTime() <= now.getTime() ? 'expired' : approval.status;
}

export function urgencyOf(secondsRemaining: number | null): ApprovalResponse['urgency_level'] {
  if (secondsRemaining === null) return 'no_expiry';
  if (secondsRemaining <= CRITICAL_WITHIN_S) return 'critical';
  if (secondsRemaining <= HIGH_WITHIN_S) return 'high';
  return 'normal';
}

/** The one mapping from a stored approval to its representation at `now`. */
export function toApprovalResponse(approval: StoredApproval, now: Date): ApprovalResponse {
  const status = effectiveStatus(approval, now);
  let secondsRemaining: number | null = null;
  if (approval.expiresAt !== null) {
    // Rounded up, so 0 means "no time left" and never shows on an approval that can still be decided.
    secondsRemaining = status === 'pending' ? Math.max(0, Math.ceil((approval.expiresAt.getTime() - now.getTime()) / 1000)) : 0;
  }
  return {
    id: approval.id,
    action_type: approval.actionType,
    title: approval.title,
    description: approval.description,
    requested_by: approval.requestedBy,
    risk_level: approval.riskLevel,
    status,
    created_at: approval.createdAt.toISOString(),
    expires_at: approval.expiresAt?.toISOString() ?? null,
    decided_at: approval.decidedAt?.toISOString() ?? null,
    decided_by: approval.decidedBy,
    decision_reason: approval.decisionReason,
    task_id: approval.taskId,
    metadata: approval.metadata,
    seconds_remaining: secondsRemaining,
    urgency_level: urgencyOf(secondsRemaining),
  };
}
