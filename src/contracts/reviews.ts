// Schemas of the review-stage endpoints: StageDecisionPayload and StageDecisionResponse.
import { z } from 'zod';
import { VERDICTS } from './values.ts';

const TaskId = z.string().min(1).max(128).describe('Id of the task under review.');
const StageName = z.string().min(1).max(128).describe('Name of the review stage, e.g. `code_review`.');

export const DecideStageInput = z
  .strictObject({
    task_id: TaskId,
    stage_name: StageName,
    verdict: z.enum(VERDICTS),
    reason: z
      .string()
      .min(1)
      .max(4096)
      .refine((s) => s.trim().length > 0, { message: 'must not be blank' })
      .nullish()
      .describe('Why; null or absent when there is nothing to say.'),
  })
  .meta({ id: 'StageDecisionPayload' });
export type DecideStageInput = z.infer<typeof DecideStageInput>;

export const ListStagesInput = z.strictObject({ task_id: TaskId });

export const StageDecisionResponse = z
  .object({
    task_id: z.string(),
    stage_name: z.string(),
    verdict: z.enum(VERDICTS),
    reason: z.string().nullable(),
    decided_by: z.string().describe('Username of the decider.'),
    decided_at: z.iso.datetime({ precision: 3 }),
  })
  .meta({ id: 'StageDecisionResponse' });
/** The wire shape of a stage decision; `toStageDecisionResponse` in the service is the one mapping to it. */
export type StageDecisionResponse = z.infer<typeof StageDecisionResponse>;
