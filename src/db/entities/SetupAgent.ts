// The wizard's agent roster: one row per agent, addressed by its stable position agent_index (0..99).
import { defineEntity, p } from '@mikro-orm/core';
import { MODEL_TIERS } from '../../contracts/catalogue.ts';
import { AGENT_LEVELS } from '../../contracts/values.ts';

export const SetupAgentSchema = defineEntity({
  name: 'SetupAgent',
  tableName: 'setup_agents',
  properties: {
    /** Dense 0..n-1 in creation order; agents are never removed one by one, only replaced wholesale by a template. */
    agentIndex: p.integer().primary().autoincrement(false),
    name: p.string().length(200),
    role: p.string().length(100),
    department: p.string().length(100),
    level: p.enum(AGENT_LEVELS).columnType('varchar(16)'),
    personalityPreset: p.string().length(64),
    modelProvider: p.string().length(64),
    modelId: p.string().length(128),
    /** Tier of the model when it was assigned, so the roster still reads if the catalogue later drops the model. */
    tier: p.enum(MODEL_TIERS).columnType('varchar(16)'),
    budgetLimitMonthly: p.double().nullable(),
    createdAt: p.datetime(3),
    updatedAt: p.datetime(3),
  },
  checks: [
    // The 100-agent cap holds even if a service bug skipped its own check.
    { name: 'setup_agents_index_check', expression: 'agent_index >= 0 and agent_index < 100' },
  ],
});
export class SetupAgent extends SetupAgentSchema.class {}
SetupAgentSchema.setClass(SetupAgent);
