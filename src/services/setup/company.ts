// Creating the company, optionally from a builtin template that replaces the agent roster.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../context/deps.ts';
import { pickModelForTier, type ProviderCatalogue } from '../../data/providerCatalogue.ts';
import { findTemplate, type CompanyTemplate } from '../../data/templates.ts';
import { sqlRun } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import { agentCount, allAgents, replaceRoster, toSummary, type AgentSummary, type NewAgent } from './agents.ts';
import { localeName } from './names.ts';
import { lockOpenSetup } from './state.ts';

export type CreateCompanyInput = {
  company_name: string;
  description?: string | null | undefined;
  template_name?: string | null | undefined;
};

export type SetupCompanyResponse = {
  company_name: string;
  description: string | null;
  template_applied: string | null;
  department_count: number;
  agents: AgentSummary[];
  agent_count: number;
};

/**
 * The template's agents with names drawn from the chosen locales (distinct within the roster) and the
 * catalogue's model for each agent's tier (the nearest tier when that one is not offered).
 */
export async function templateRoster(template: CompanyTemplate, catalogue: ProviderCatalogue, locales: readonly string[] | null): Promise<NewAgent[]> {
  const taken = new Set<string>();
  const roster: NewAgent[] = [];
  for (const agent of template.agents) {
    const choice = pickModelForTier(catalogue, agent.tier);
    if (!choice) throw ApiError.validation('no model provider is configured, so the template agents cannot be given models');
    const name = await localeName(locales, taken);
    taken.add(name);
    roster.push({
      name,
      role: agent.role,
      department: agent.department,
      level: agent.level,
      personality_preset: agent.personality_preset,
      model_provider: choice.provider,
      model_id: choice.model.id,
      tier: choice.model.tier,
      budget_limit_monthly: null,
    });
  }
  return roster;
}

export async function createCompany(em: EntityManager, deps: Deps, input: CreateCompanyInput): Promise<SetupCompanyResponse> {
  return em.transactional(async (tx) => {
    const state = await lockOpenSetup(tx);
    const now = deps.clock.now();
    const templateName = input.template_name ?? null;
    if (templateName !== null) {
      const template = findTemplate(templateName);
      if (!template) throw ApiError.validation(`unknown template ${templateName}`);
      await replaceRoster(tx, await templateRoster(template, deps.providers, state.name_locales), now);
    } else if ((await agentCount(tx)) > 0) {
      // Without a template the roster would silently survive under a different company; make it explicit.
      throw ApiError.conflict('agents already exist; apply a template to replace them');
    }
    const description = input.description ?? null;
    await sqlRun(tx, 'update setup_state set company_name = ?, company_description = ?, template_name = ?, updated_at = ? where id = 1', [
      input.company_name,
      description,
      templateName,
      now,
    ]);
    const roster = (await allAgents(tx)).map(toSummary);
    return {
      company_name: input.company_name,
      description,
      template_applied: templateName,
      department_count: new Set(roster.map((agent) => agent.department)).size,
      agents: roster,
      agent_count: roster.length,
    };
  });
}
