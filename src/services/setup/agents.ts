// The agent roster of the setup wizard: adding agents, listing them by agent_index, and editing one.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../context/deps.ts';
import { isPersonalityPreset } from '../../data/personalityPresets.ts';
import { findModel, type ProviderCatalogue } from '../../data/providerCatalogue.ts';
import type { AgentLevel, ModelTier } from '../../data/templates.ts';
import { sqlRows, sqlRun } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.ts';
import { localeName } from './names.ts';
import { lockOpenSetup } from './state.ts';

export const MAX_AGENTS = 100;

export type AgentRow = {
  agent_index: number;
  name: string;
  role: string;
  department: string;
  level: AgentLevel;
  personality_preset: string;
  model_provider: string;
  model_id: string;
  tier: ModelTier;
  budget_limit_monthly: number | null;
  created_at: Date;
  updated_at: Date;
};

/** An agent before it has a position in the roster. */
export type NewAgent = Omit<AgentRow, 'agent_index' | 'created_at' | 'updated_at'>;

export type AgentSummary = {
  agent_index: number;
  name: string;
  role: string;
  department: string;
  level: AgentLevel;
  model_provider: string;
  model_id: string;
  tier: ModelTier;
  personality_preset: string;
};

export function toSummary(row: AgentRow): AgentSummary {
  return {
    agent_index: row.agent_index,
    name: row.name,
    role: row.role,
    department: row.department,
    level: row.level,
    model_provider: row.model_provider,
    model_id: row.model_id,
    tier: row.tier,
    personality_preset: row.personality_preset,
  };
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

export async function allAgents(em: EntityManager): Promise<AgentRow[]> {
  return sqlRows<AgentRow>(em, 'select * from setup_agents order by agent_index');
}

export async function agentCount(em: EntityManager): Promise<number> {
  const [row] = await sqlRows<{ n: number }>(em, 'select count(*)::int as n from setup_agents');
  return row?.n ?? 0;
}

const COLUMNS = [
  'agent_index', 'name', 'role', 'department', 'level', 'personality_preset', 'model_provider', 'model_id', 'tier',
  'budget_limit_monthly', 'created_at', 'updated_at',
] as const;

/** Appends agents at positions `from`, `from + 1`, ... in one statement. */
export async function insertAgents(tx: EntityManager, agents: readonly NewAgent[], from: number, now: Date): Promise<AgentRow[]> {
  if (agents.length === 0) return [];
  const placeholders = agents.map(() => `(${COLUMNS.map(() => '?').join(', ')})`).join(', ');
  const params = agents.flatMap((a, i) => [
    from + i, a.name, a.role, a.department, a.level, a.personality_preset, a.model_provider, a.model_id, a.tier,
    a.budget_limit_monthly, now, now,
  ]);
  return sqlRows<AgentRow>(tx, `insert into setup_agents (${COLUMNS.join(', ')}) values ${placeholders} returning *`, params);
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

export type SetupAgentResponse = Pick<AgentSummary, 'agent_index' | 'name' | 'role' | 'department' | 'model_provider' | 'model_id'>;

export async function createAgent(em: EntityManager, deps: Deps, input: CreateAgentInput): Promise<SetupAgentResponse> {
  return em.transactional(async (tx) => {
    await lockOpenSetup(tx);
    const preset = requirePreset(input.personality_preset);
    const model = requireModel(deps.providers, input.model_provider, input.model_id);
    // Indices are dense (agents are only ever appended or replaced wholesale), so the count is the next index.
    const index = await agentCount(tx);
    if (index >= MAX_AGENTS) throw ApiError.conflict(`the roster already has the maximum of ${String(MAX_AGENTS)} agents`);
    const [row] = await insertAgents(
      tx,
      [{
        name: input.name,
        role: input.role,
        department: input.department,
        level: input.level,
        personality_preset: preset,
        model_provider: model.provider,
        model_id: model.id,
        tier: model.tier,
        budget_limit_monthly: input.budget_limit_monthly ?? null,
      }],
      index,
      deps.clock.now(),
    );
    if (!row) throw new Error('agent insert returned no row');
    const { agent_index, name, role, department, model_provider, model_id } = row;
    return { agent_index, name, role, department, model_provider, model_id };
  });
}

const AGENTS_LIST = 'setup.agents';

export async function listAgents(
  em: EntityManager,
  deps: Deps,
  input: { cursor?: string | null | undefined; limit?: number | null | undefined },
) {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  let after = -1;
  if (input.cursor) {
    const [position] = decodeCursor(deps.secret, AGENTS_LIST, input.cursor);
    if (typeof position !== 'number' || !Number.isInteger(position)) throw ApiError.badRequest('query.cursor: invalid or expired cursor');
    after = position;
  }
  const rows = await sqlRows<AgentRow>(em, 'select * from setup_agents where agent_index > ? order by agent_index limit ?', [after, limit + 1]);
  return toPage(rows, { limit, secret: deps.secret, list: AGENTS_LIST, positionOf: (row) => [row.agent_index], toItem: toSummary });
}

type AgentChange = Partial<Pick<AgentRow, 'name' | 'personality_preset' | 'model_provider' | 'model_id' | 'tier'>>;

/**
 * Locks the wizard, finds agent `index` (404/3000 when out of range) and applies the change `decide`
 * computes from it; the change is validated by `decide` itself, after the agent is known to exist.
 */
async function editAgent(
  em: EntityManager,
  deps: Deps,
  index: number,
  decide: (agent: AgentRow, locales: string[] | null, tx: EntityManager) => Promise<AgentChange> | AgentChange,
): Promise<AgentSummary> {
  return em.transactional(async (tx) => {
    const state = await lockOpenSetup(tx);
    // Out of range without a query: a huge index must not reach an int4 comparison.
    const [agent] = index < MAX_AGENTS ? await sqlRows<AgentRow>(tx, 'select * from setup_agents where agent_index = ?', [index]) : [];
    if (!agent) throw ApiError.notFound(`agent ${String(index)} does not exist`);
    const change = await decide(agent, state.name_locales, tx);
    const entries = Object.entries(change);
    const assignments = entries.map(([column]) => `${column} = ?`).join(', ');
    const [row] = await sqlRows<AgentRow>(
      tx,
      `update setup_agents set ${assignments}, updated_at = ? where agent_index = ? returning *`,
      [...entries.map(([, value]) => value), deps.clock.now(), index],
    );
    if (!row) throw new Error('agent update returned no row');
    return toSummary(row);
  });
}

export function randomizeAgentName(em: EntityManager, deps: Deps, input: { agent_index: number }): Promise<AgentSummary> {
  return editAgent(em, deps, input.agent_index, async (agent, locales, tx) => {
    // The new name differs from the current one and from every other agent's.
    const taken = new Set((await sqlRows<{ name: string }>(tx, 'select name from setup_agents')).map((r) => r.name));
    return { name: await localeName(locales, taken) };
  });
}

export function updateAgentName(em: EntityManager, deps: Deps, input: { agent_index: number; name: string }): Promise<AgentSummary> {
  return editAgent(em, deps, input.agent_index, () => ({ name: input.name }));
}

export function updateAgentModel(
  em: EntityManager,
  deps: Deps,
  input: { agent_index: number; model_provider: string; model_id: string },
): Promise<AgentSummary> {
  return editAgent(em, deps, input.agent_index, () => {
    const model = requireModel(deps.providers, input.model_provider, input.model_id);
    return { model_provider: model.provider, model_id: model.id, tier: model.tier };
  });
}

export function updateAgentPersonality(
  em: EntityManager,
  deps: Deps,
  input: { agent_index: number; personality_preset: string },
): Promise<AgentSummary> {
  return editAgent(em, deps, input.agent_index, () => ({ personality_preset: requirePreset(input.personality_preset) }));
}

/** Swaps the whole roster for `agents` at positions 0..n-1; only applying a template does this. */
export async function replaceRoster(tx: EntityManager, agents: readonly NewAgent[], now: Date): Promise<AgentRow[]> {
  await sqlRun(tx, 'delete from setup_agents');
  return insertAgents(tx, agents, 0, now);
}
