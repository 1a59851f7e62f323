// The company: creating it, optionally from a builtin template that replaces the agent roster, and reading it back.
import type { EntityManager } from '@mikro-orm/postgresql';
import { pickModelForTier } from '../../data/providerCatalogue.ts';
import { findTemplate, type CompanyTemplate } from '../../data/templates.ts';
import { ApiError } from '../../errors.ts';
import { recordEvent } from '../../events/record.ts';
import type { SetupCompanyInfoResponse, SetupCompanyResponse } from '../../contracts/setup.ts';
import { toAgentSummary } from './agents.ts';
import { localeName } from './names.ts';
import { lockOpenSetup } from './state.ts';
import * as store from './store.ts';
import type { Actor } from '../../contracts/actor.ts';
import type { Clock } from '../../contracts/clock.ts';
import type { ProviderCatalogue } from '../../contracts/catalogue.ts';

export type CreateCompanyInput = {
  company_name: string;
  description?: string | null | undefined;
  template_name?: string | null | undefined;
};

/** The one mapping of the stored company to what clients see. */
function toCompanyInfo(company: store.CompanyRecord): SetupCompanyInfoResponse {
  return {
    company_name: company.companyName,
    description: company.companyDescription,
    template_applied: company.templateName,
    department_count: company.departmentCount,
    agent_count: company.agentCount,
  };
}

/** The company as last created, with the current roster's counts; 404/3000 before one exists. */
export async function getCompany({ em }: { em: EntityManager }): Promise<SetupCompanyInfoResponse> {
  const company = await store.readCompany(em);
  if (!company) throw ApiError.notFound('no company has been created yet');
  return toCompanyInfo(company);
}

/**
 * The template's agents with names drawn from the chosen locales (distinct within the roster) and the
 * catalogue's model for each agent's tier (the nearest tier when that one is not offered).
 */
export async function templateRoster(template: CompanyTemplate, catalogue: ProviderCatalogue, locales: readonly string[] | null): Promise<store.NewAgent[]> {
  const taken = new Set<string>();
  const roster: store.NewAgent[] = [];
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
      personalityPreset: agent.personality_preset,
      modelProvider: choice.provider,
      modelId: choice.model.id,
      tier: choice.model.tier,
      budgetLimitMonthly: null,
    });
  }
  return roster;
}

export async function createCompany(
  { em, clock, providers, actor }: { em: EntityManager; clock: Clock; providers: ProviderCatalogue; actor: Actor },
  input: CreateCompanyInput,
): Promise<SetupCompanyResponse> {
  return em.transactional(async (tx) => {
    const state = await lockOpenSetup(tx);
    const now = clock.now();
    const templateName = input.template_name ?? null;
    if (templateName !== null) {
      const template = findTemplate(templateName);
      if (!template) throw ApiError.validation(`unknown template ${templateName}`);
      const roster = await templateRoster(template, providers, state.nameLocales);
      // Only applying a template swaps the whole roster; agents take positions 0..n-1 in template order.
      await store.deleteAllAgents(tx);
      await store.insertAgents(tx, roster, 0, now);
    } else if ((await store.agentCount(tx)) > 0) {
      // Without a template the roster would silently survive under a different company; make it explicit.
      throw ApiError.conflict('agents already exist; apply a template to replace them');
    }
    const company = { companyName: input.company_name, companyDescription: input.description ?? null, templateName };
    await store.saveCompany(tx, company, now);
    const agents = (await store.allAgents(tx)).map(toAgentSummary);
    const departmentCount = new Set(agents.map((agent) => agent.department)).size;
    const created = { ...toCompanyInfo({ ...company, agentCount: agents.length, departmentCount }), agents };
    await recordEvent(tx, { type: 'setup.company_created', actor: actor.username, at: now, data: created });
    return created;
  });
}
