// reviews.{decideStage, listStages}
import { authedProcedure, router, writerProcedure } from '../../trpc.ts';
import { idempotently } from '../idempotency.ts';
import * as stages from '../../services/reviews/stages.ts';
import { DecideStageInput, ListStagesInput, StageDecisionResponse } from '../../contracts/reviews.ts';

export const reviewsRouter = router({
  decideStage: writerProcedure
    .meta({
      apiKey: 'reviews:write',
      openapi: {
        method: 'POST',
        path: '/reviews/{task_id}/stages/{stage_name}/decide',
        tags: ['reviews'],
        summary: 'Decide a review stage of a task (final: a second decision is 409/4001)',
      },
      rest: { status: 201, idempotencyKey: true },
      errors: { 4001: 'The stage of this task has already been decided (decisions are final).' },
      limits: { op: 'reviews.decide_stage' },
    })
    .input(DecideStageInput)
    .output(StageDecisionResponse)
    .mutation(({ ctx, input }) =>
      idempotently(ctx, { operation: 'reviews.decideStage', input, output: StageDecisionResponse }, (em) =>
        stages.decideStage({ em, clock: ctx.deps.clock, actor: ctx.actor }, input),
      ),
    ),

  listStages: authedProcedure
    .meta({
      apiKey: 'reviews:read',
      openapi: {
        method: 'GET',
        path: '/reviews/{task_id}/stages',
        tags: ['reviews'],
        summary: "A task's stage decisions in decision order",
      },
    })
    .input(ListStagesInput)
    .output(StageDecisionResponse.array())
    .query(({ ctx, input }) => stages.listStages({ em: ctx.em }, input.task_id)),
});
