// Review-stage decisions: one final verdict per (task, stage), in the order they were taken.
import { defineEntity, p } from '@mikro-orm/core';
import { VERDICTS, type Verdict } from '../../contracts/values.ts';

const sqlList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

export const StageDecisionSchema = defineEntity({
  name: 'StageDecision',
  tableName: 'stage_decisions',
  properties: {
    // A sequence gives the decision order even when two decisions share a millisecond.
    id: p.bigint('number').primary().autoincrement(),
    taskId: p.string().length(128),
    stageName: p.string().length(128),
    // Held to VERDICTS by the check constraint below.
    verdict: p.string().length(8).$type<Verdict>(),
    reason: p.text().nullable(),
    decidedById: p.uuid(),
    decidedBy: p.string().length(128),
    decidedAt: p.datetime(3),
  },
  uniques: [{ name: 'stage_decisions_task_stage_unique', properties: ['taskId', 'stageName'] }],
  checks: [{ name: 'stage_decisions_verdict_check', expression: `verdict in (${sqlList(VERDICTS)})` }],
});
export class StageDecision extends StageDecisionSchema.class {}
StageDecisionSchema.setClass(StageDecision);
