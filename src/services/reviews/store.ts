// The stage_decisions table: every query of the reviews area, through the typed Kysely view of the entities.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Insertable } from 'kysely';
import { kysely, type DB, type Stored } from '../../db/kysely.ts';

/** A stage decision as stored: `decidedAt` is a Date, `id` the sequence that orders decisions. */
export type StoredStageDecision = Stored<'stage_decisions'>;

/** Inserts a decision; a second one for the same (task, stage) fails on `stage_decisions_task_stage_unique`. */
export async function insertStageDecision(em: EntityManager, decision: Insertable<DB['stage_decisions']>): Promise<StoredStageDecision> {
  return kysely(em).insertInto('stage_decisions').values(decision).returningAll().executeTakeFirstOrThrow();
}

/** The task's decisions in the order they were taken (the id breaks same-millisecond ties). */
export async function stageDecisionsOf(em: EntityManager, taskId: string): Promise<StoredStageDecision[]> {
  return kysely(em).selectFrom('stage_decisions').selectAll().where('taskId', '=', taskId).orderBy('decidedAt').orderBy('id').execute();
}
