// approvals.{list, get, create, approve, reject}
import { approverProcedure, authedProcedure, router, writerProcedure } from '../../trpc.ts';
import { idempotently } from '../idempotency.ts';
import * as approvals from '../../services/approvals/approvals.ts';
import { MAX_WAITS_PER_USER } from '../../services/approvals/waiting.ts';
import { ApprovalPage, ApprovalResponse, ApproveInput, CreateApprovalInput, GetApprovalInput, ListApprovalsInput, RejectInput } from '../../contracts/approvals.ts';

const DECISION_ERRORS = {
  1001: 'The approval was requested by the caller: nobody decides their own request.',
  3000: 'No approval has this id.',
  4000: 'The approval is no longer pending (approved, rejected, or its time has passed).',
} as const;

export const approvalsRouter = router({
  list: authedProcedure
    .meta({
      apiKey: 'approvals:read',
      openapi: {
        method: 'GET',
        path: '/approvals',
        tags: ['approvals'],
        summary: 'List approvals, newest first',
      },
      rest: { list: true },
    })
    .input(ListApprovalsInput)
    .output(ApprovalPage)
    .query(({ ctx, input }) => approvals.listApprovals({ em: ctx.em, clock: ctx.deps.clock, secret: ctx.deps.secret }, input)),

  create: writerProcedure
    .meta({
      apiKey: 'approvals:write',
      openapi: {
        method: 'POST',
        path: '/approvals',
        tags: ['approvals'],
        summary: 'Request an approval',
      },
      rest: { status: 201, location: '/api/v1/approvals/{id}', idempotencyKey: true },
      limits: { op: 'approvals.create' },
    })
    .input(CreateApprovalInput)
    .output(ApprovalResponse)
    .mutation(({ ctx, input }) =>
      idempotently(ctx, { operation: 'approvals.create', input, output: ApprovalResponse }, (em) =>
        approvals.createApproval({ em, clock: ctx.deps.clock, actor: ctx.actor }, input),
      ),
    ),

  get: authedProcedure
    .meta({
      apiKey: 'approvals:read',
      openapi: {
        method: 'GET',
        path: '/approvals/{approval_id}',
        tags: ['approvals'],
        summary: 'Read one approval (strong ETag), or wait for its decision',
        description:
          `With \`wait_s\`, a pending approval's answer is held until it is decided or expires (through any instance), ` +
          'or `wait_s` seconds pass; then 200 with its state at that moment (still `pending` if nothing happened) and ' +
          `its \`ETag\`. A decided or expired approval is answered at once. At most ${String(MAX_WAITS_PER_USER)} waits per ` +
          'user may be in flight; closing the connection ends a wait.',
      },
      rest: { etag: true, abortOnDisconnect: true },
      errors: {
        3000: 'No approval has this id.',
        5002: `With \`wait_s\`: ${String(MAX_WAITS_PER_USER)} waits of this user are already in flight (on any instance); this limit stays on when rate limits are switched off.`,
      },
    })
    .input(GetApprovalInput)
    .output(ApprovalResponse)
    .query(async ({ ctx, input, signal }) => {
      const env = { em: ctx.em, clock: ctx.deps.clock };
      const { approval, etag } = input.wait_s
        ? await ctx.deps.approvalWaits.wait({ ...env, actor: ctx.actor }, input.approval_id, input.wait_s, signal)
        : await approvals.getApproval(env, input.approval_id);
      ctx.response.setHeader('etag', etag);
      return approval;
    }),

  approve: approverProcedure
    .meta({
      apiKey: 'approvals:decide',
      openapi: {
        method: 'POST',
        path: '/approvals/{approval_id}/approve',
        tags: ['approvals'],
        summary: 'Approve a pending approval (If-Match honoured)',
      },
      rest: { ifMatch: true },
      errors: DECISION_ERRORS,
      limits: { op: 'approvals.approve' },
    })
    .input(ApproveInput)
    .output(ApprovalResponse)
    .mutation(({ ctx, input }) =>
      approvals.decideApproval({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, {
        approvalId: input.approval_id,
        decision: 'approved',
        reason: input.comment ?? null,
        ifMatch: ctx.credentials.ifMatch,
      }),
    ),

  reject: approverProcedure
    .meta({
      apiKey: 'approvals:decide',
      openapi: {
        method: 'POST',
        path: '/approvals/{approval_id}/reject',
        tags: ['approvals'],
        summary: 'Reject a pending approval (If-Match honoured)',
      },
      rest: { ifMatch: true },
      errors: DECISION_ERRORS,
      limits: { op: 'approvals.reject' },
    })
    .input(RejectInput)
    .output(ApprovalResponse)
    .mutation(({ ctx, input }) =>
      approvals.decideApproval({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, {
        approvalId: input.approval_id,
        decision: 'rejected',
        reason: input.reason,
        ifMatch: ctx.credentials.ifMatch,
      }),
    ),
});
