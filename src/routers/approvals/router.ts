// approvals.{list, get, create, approve, reject}
import { approverProcedure, authedProcedure, router, writerProcedure } from '../../trpc.ts';
import { idempotently } from '../idempotency.ts';
import * as approvals from '../../services/approvals/approvals.ts';
import { ApprovalPage, ApprovalResponse, ApproveInput, CreateApprovalInput, GetApprovalInput, ListApprovalsInput, RejectInput } from './schemas.ts';

export const approvalsRouter = router({
  list: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/approvals',
        tags: ['approvals'],
        summary: 'List approvals, newest first',
        errorResponses: [400, 401, 429, 500, 503],
      },
      rest: { list: true },
    })
    .input(ListApprovalsInput)
    .output(ApprovalPage)
    .query(({ ctx, input }) => approvals.listApprovals({ em: ctx.em, clock: ctx.deps.clock, secret: ctx.deps.secret }, input)),

  create: writerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/approvals',
        tags: ['approvals'],
        summary: 'Request an approval',
        errorResponses: [400, 401, 403, 409, 429, 500, 503],
      },
      rest: { status: 201, location: '/api/v1/approvals/{id}' },
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
      openapi: {
        method: 'GET',
        path: '/approvals/{approval_id}',
        tags: ['approvals'],
        summary: 'Read one approval (strong ETag)',
        errorResponses: [400, 401, 404, 429, 500, 503],
      },
      rest: { etag: true },
    })
    .input(GetApprovalInput)
    .output(ApprovalResponse)
    .query(async ({ ctx, input }) => {
      const { approval, etag } = await approvals.getApproval({ em: ctx.em, clock: ctx.deps.clock }, input.approval_id);
      ctx.response.setHeader('etag', etag);
      return approval;
    }),

  approve: approverProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/approvals/{approval_id}/approve',
        tags: ['approvals'],
        summary: 'Approve a pending approval (If-Match honoured)',
        errorResponses: [400, 401, 403, 404, 409, 429, 500, 503],
      },
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
      openapi: {
        method: 'POST',
        path: '/approvals/{approval_id}/reject',
        tags: ['approvals'],
        summary: 'Reject a pending approval (If-Match honoured)',
        errorResponses: [400, 401, 403, 404, 409, 429, 500, 503],
      },
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
