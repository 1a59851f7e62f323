// Approvals: requests for a decision that move once, from pending to approved, rejected or expired.
import { defineEntity, p } from '@mikro-orm/core';
import { APPROVAL_STATUSES, RISK_LEVELS, type ApprovalStatus, type RiskLevel } from '../../contracts/values.ts';

const sqlList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

export const ApprovalSchema = defineEntity({
  name: 'Approval',
  tableName: 'approvals',
  properties: {
    id: p.uuid().primary(),
    actionType: p.string().length(128),
    title: p.string().length(256),
    description: p.text(),
    // Usernames are copied at write time so a deleted account still reads as who asked and who decided.
    requestedById: p.uuid(),
    requestedBy: p.string().length(128),
    // The check constraints below hold these columns to the listed values.
    riskLevel: p.string().length(16).$type<RiskLevel>(),
    status: p.string().length(16).$type<ApprovalStatus>(),
    createdAt: p.datetime(3),
    expiresAt: p.datetime(3).nullable(),
    decidedAt: p.datetime(3).nullable(),
    decidedById: p.uuid().nullable(),
    decidedBy: p.string().length(128).nullable(),
    decisionReason: p.text().nullable(),
    taskId: p.string().length(128).nullable(),
    metadata: p.json<Record<string, string>>().columnType('jsonb').defaultRaw(`'{}'`),
  },
  indexes: [
    // The list is newest first, usually filtered by status (the dashboard's pending queue).
    {
      name: 'approvals_status_created_at_id_idx',
      expression: `create index "approvals_status_created_at_id_idx" on "approvals" ("status", "created_at" desc, "id" desc)`,
    },
    {
      name: 'approvals_created_at_id_idx',
      expression: `create index "approvals_created_at_id_idx" on "approvals" ("created_at" desc, "id" desc)`,
    },
    // The expiry sweep only ever looks at pending rows with a deadline.
    {
      name: 'approvals_pending_expires_at_idx',
      expression: `create index "approvals_pending_expires_at_idx" on "approvals" ("expires_at") where "status" = 'pending' and "expires_at" is not null`,
    },
  ],
  checks: [
    { name: 'approvals_status_check', expression: `status in (${sqlList(APPROVAL_STATUSES)})` },
    { name: 'approvals_risk_level_check', expression: `risk_level in (${sqlList(RISK_LEVELS)})` },
  ],
});
export class Approval extends ApprovalSchema.class {}
ApprovalSchema.setClass(Approval);
