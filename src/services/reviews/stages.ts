// Review-stage decisions: one final verdict per (task, stage), recorded with the real decider.
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../context/index.ts';
import type { Deps } from '../../context/deps.ts';
import { sqlRows } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';

export const VERDICTS = ['pass', 'fail', 'skip'] as const;
export type Verdict = (typeof VERDICTS)[number];

type StageDecisionRow = {
  task_id: string;
  stage_name: string;
  verdict: Verdict;
  reason: string | null;
  decided_by: string;
  /** The driver hands timestamptz over as text. */
  decided_at: Date | string;
};

export type StageDecisionResponse = {
  task_id: string;
  stage_name: string;
  verdict: Verdict;
  reason: string | null;
  decided_by: string;
  decided_at: string;
};

export type DecideStageInput = { task_id: string; stage_name: string; verdict: Verdict; reason?: string | null | undefined };

function toResponse(row: StageDecisionRow): StageDecisionResponse {
  return {
    task_id: row.task_id,
    stage_name: row.stage_name,
    verdict: row.verdict,
    reason: row.reason,
    decided_by: row.decided_by,
    decided_at: new Date(row.decided_at).toISOString(),
  };
}

/** Records a stage's verdict; decisions are final, so a second one (even a concurrent one) is 409/4001. */
export async function decideStage(em: EntityManager, deps: Deps, actor: Actor, input: DecideStageInput): Promise<StageDecisionResponse> {
  try {
    const [row] = await sqlRows<StageDecisionRow>(
      em,
      `insert into stage_decisions (task_id, stage_name, verdict, reason, decided_by_id, decided_by, decided_at)
       values (?, ?, ?, ?, ?, ?, ?)
       returning task_id, stage_name, verdict, reason, decided_by, decided_at`,
      [input.task_id, input.stage_name, input.verdict, input.reason ?? null, actor.userId, actor.username, deps.clock.now()],
    );
    if (!row) throw new Error('insert returned no row');
    return toResponse(row);
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException && error.message.includes('stage_decisions_task_stage_unique')) {
      throw ApiError.duplicate('this stage has already been decided');
    }
    throw error;
  }
}

/** The task's decisions in the order they were taken; an unknown task simply has none. */
export async function listStages(em: EntityManager, taskId: string): Promise<StageDecisionResponse[]> {
  const rows = await sqlRows<StageDecisionRow>(
    em,
    `select task_id, stage_name, verdict, reason, decided_by, decided_at
       from stage_decisions where task_id = ? order by decided_at, id`,
    [taskId],
  );
  return rows.map(toResponse);
}
