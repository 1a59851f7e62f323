// Approval waits in flight (CONTRACT §4.11) on every instance, so the per-user cap holds across instances.
import { defineEntity, p } from '@mikro-orm/core';

export const ApprovalWaitSchema = defineEntity({
  name: 'ApprovalWait',
  tableName: 'approval_waits',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().index('approval_waits_user_id_idx'),
    approvalId: p.uuid(),
    /**
     * When the wait is over at the latest (its wait_s and a margin). A wait deletes its row when it ends; the
     * row of one whose instance died stops counting at this time, so no heartbeat is needed.
     */
    heldUntil: p.datetime(3),
  },
});
export class ApprovalWait extends ApprovalWaitSchema.class {}
ApprovalWaitSchema.setClass(ApprovalWait);
