// Review-stage decisions: one final verdict per (task, stage), recorded with the real decider.
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent } from '../../events/record.ts';
import type { DecideStageInput, StageDecisionResponse } from '../../contracts/reviews.ts';
import { insertStageDecision, stageDecisionsOf, type StoredStageDecision } from './store.ts';
import type { Actor } from '../../contracts/actor.ts';
import type { Clock } from '../../contracts/clock.ts';

/** The one mapping from a stored decision to its representation. */
function toStageDecisionResponse(decision: StoredStageDecision): StageDecisionResponse {
  return {
    task_id: decision.taskId,
    stage_name: decision.stageName,
    verdict: decision.verdict,
    reason: decision.reason,
    decided_by: decision.decidedBy,
    decided_at: decision.decidedAt.toISOString(),
  };
}

/**
 * Records a stage's verdict and its `review.stage_decided` event in one transaction. Decisions are final:
 * a second one (even a concurrent one) loses on the unique constraint, which errors.ts maps to 409/4001,
 * and its transaction (with no event) rolls back.
 */
export async function decideStage(
  { em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor },
  input: DecideStageInput,
): Promise<StageDecisionResponse> {
  return em.transactional(async (tx) => {
    const now = clock.now();
    const decision = toStageDecisionResponse(
      await insertStageDecision(tx, {
        taskId: input.task_id,
        stageName: input.stage_name,
        verdict: input.verdict,
        reason: input.reason ?? null,
        decidedById: actor.userId,
        decidedBy: actor.username,
        decidedAt: now,
      }),
    );
    await recordEvent(tx, { type: 'review.stage_decided', actor: actor.username, at: now, data: decision });
    return decision;
  });
}

/** The task's decisions in the order they were taken; an unknown task simply has none. */
export async function listStages({ em }: { em: EntityManager }, taskId: string): Promise<StageDecisionResponse[]> {
  return (await stageDecisionsOf(em, taskId)).map(toStageDecisionResponse);
}
