// The agent roster of the setup wizard: adding agents, listing them by agent_index, and editing one.
import type { EntityManager } from '@mikro-orm/postgresql';
import { isPersonalityPreset } from '../../data/personalityPresets.ts';
import { findModel } from '../../data/providerCatalogue.ts';
import { ApiError } from '../../errors.ts';
import { recordEvent } from '../../events/record.ts';
import type { SetupAgentResponse, SetupAgentSummary } from '../../contracts/setup.ts';
import { decodeCursor, toPage } from '../pagination.ts';
import { localeName } from './names.ts';
import { lockOpenSetup } from './state.ts';
import * as store from './store.ts';
import type { Actor } from '../../contracts/actor.ts';
import type { Clock } from '../../contracts/clock.ts';
import { DEFAULT_PAGE_SIZE } from '../../contracts/pagination.ts';
import type { ProviderCatalogue, AgentLevel, ModelTier } from '../../contracts/catalogue.ts';

export const MAX_AGENTS = 100;

/** The one mapping of a stored agent to what clients see. */
export function toAgentSummary(agent: store.AgentRecord): SetupAgentSummary {
  return {
    agent_index: agent.agentIndex,
    name: agent.name,
    role: agent.role,
    department: agent.department,
    level: agent.level,
    model_provider: agent.modelProvider,
    model_id: agent.modelId,
    tier: agent.tier,
    personality_preset: agent.personalityPreset,
  };
}

/** POST /setup/agent answers with the summary's identifying part (CONTRACT §4.4). */
function toAgentResponse(agent: store.AgentRecord): SetupAgentResponse {
  const { agent_index, name, role, department, model_provider, model_id } = toAgentSummary(agent);
  return { agent_index, name, role, department, model_provider, model_id };
}

/** The catalogue entry of a provider/model pair, or 400/2000 naming what is unknown. */
export function requireModel(catalogue: ProviderCatalogue, provider: string, modelId: string): { provider: string; id: string; tier: ModelTier } {
  if (!catalogue.providers.some((p) => p.name === provider)) throw ApiError.validation(`unknown model provider ${provider}`);
  const model = findModel(catalogue, provider, modelId);
  if (!model) throw ApiError.validation(`unknown model ${modelId} of provider ${provider}`);
  return { provider, id: model.id, tier: model.tier };
}

export function requirePreset(name: string): string {
  if (!isPersonalityPreset(name)) throw ApiError.validation(`unknown personality preset ${name}`);
  return name;
}

export type CreateAgentInput = {
  name: string;
  role: string;
  level: AgentLevel;
  personality_preset: string;
  model_provider: string;
  model_id: string;
  department: string;
  budget_limit_monthly?: number | null | undefined;
};

export async function createAgent(
  { em, clock, providers, actor }: { em: EntityManager; clock: Clock; providers: ProviderCatalogue; actor: Actor },
  input: CreateAgentInput,
): Promise<SetupAgentResponse> {
  return em.transactional(async (tx) => {
    await lockOpenSetup(tx);
    const now = clock.now();
    const personalityPreset = requirePreset(input.personality_preset);
    const model = requireModel(providers, input.model_provider, input.model_id);
    // Indices are dense (agents are only ever appended or replaced wholesale), so the count is the next index.
    const index = await store.agentCount(tx);
    if (index >= MAX_AGENTS) throw ApiError.conflict(`the roster already has the maximum of ${String(MAX_AGENTS)} agents`);
    const [agent] = await store.insertAgents(
      tx,
      [{
        name: input.name,
        role: input.role,
        department: input.department,
        level: input.level,
        personalityPreset,
        modelProvider: model.provider,
        modelId: model.id,
        tier: model.tier,
        budgetLimitMonthly: input.budget_limit_monthly ?? null,
      }],
      index,
      now,
    );
    if (!agent) throw new Error('agent insert returned no row');
    const created = toAgentResponse(agent);
    await recordEvent(tx, { type: 'setup.agent_created', actor: actor.username, at: now, data: created });
    return created;
  });
}

const AGENTS_LIST = 'setup.agents';

export async function listAgents(
  { em, secret }: { em: EntityManager; secret: Buffer },
  input: { cursor?: string | null | undefined; limit?: number | null | undefined },
) {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  let after = -1;
  if (input.cursor) {
    const [position] = decodeCursor(secret, AGENTS_LIST, input.cursor);
    if (typeof position !== 'number' || !Number.isInteger(position)) throw ApiError.badRequest('query.cursor: invalid or expired cursor');
    after = position;
  }
  const agents = await store.agentsAfter(em, after, limit + 1);
  return toPage(agents, { limit, secret, list: AGENTS_LIST, positionOf: (agent) => [agent.agentIndex], toItem: toAgentSummary });
}

type EditDeps = { em: EntityManager; clock: Clock; actor: Actor };

/**
 * Locks the wizard, finds agent `index` (404/3000 when out of range) and applies the change `decide`
 * computes from it; the change is validated by `decide` itself, after the agent is known to exist.
 * Every edit records `setup.agent_updated` with the summary it answers.
 */
async function editAgent(
  { em, clock, actor }: EditDeps,
  index: number,
  decide: (locales: string[] | null, tx: EntityManager) => Promise<store.AgentChange> | store.AgentChange,
): Promise<SetupAgentSummary> {
  return em.transactional(async (tx) => {
    const state = await lockOpenSetup(tx);
    // Out of range without a query: a huge index must not reach an int4 comparison.
    const agent = index < MAX_AGENTS ? await store.findAgent(tx, index) : undefined;
    if (!agent) throw ApiError.notFound(`agent ${String(index)} does not exist`);
    const change = await decide(state.nameLocales, tx);
    const now = clock.now();
    const updated = toAgentSummary(await store.updateAgent(tx, index, change, now));
    await recordEvent(tx, { type: 'setup.agent_updated', actor: actor.username, at: now, data: updated });
    return updated;
  });
}

export function randomizeAgentName(deps: EditDeps, input: { agent_index: number }): Promise<SetupAgentSummary> {
  return editAgent(deps, input.agent_index, async (locales, tx) => {
    // The new name differs from the current one and from every other agent's.
    const taken = new Set(await store.agentNames(tx));
    return { name: await localeName(locales, taken) };
  });
}

export function updateAgentName(deps: EditDeps, input: { agent_index: number; name: string }): Promise<SetupAgentSummary> {
  return editAgent(deps, input.agent_index, () => ({ name: input.name }));
}

export function updateAgentModel(
  { providers, ...deps }: EditDeps & { providers: ProviderCatalogue },
  input: { agent_index: number; model_provider: string; model_id: string },
): Promise<SetupAgentSummary> {
  return editAgent(deps, input.agent_index, () => {
    const model = requireModel(providers, input.model_provider, input.model_id);
    return { modelProvider: model.provider, modelId: model.id, tier: model.tier };
  });
}

export function updateAgentPersonality(
  deps: EditDeps,
  input: { agent_index: number; personality_preset: string },
): Promise<SetupAgentSummary> {
  return editAgent(deps, input.agent_index, () => ({ personalityPreset: requirePreset(input.personality_preset) }));
}
