// setup.{status, templates, providers, getCompany, createCompany, createAgent, listAgents, randomizeAgentName, updateAgentModel, updateAgentName, updateAgentPersonality, availableLocales, getLocales, setLocales, personalityPresets, complete}
import { authedProcedure, ceoProcedure, router, unlimitedProcedure } from '../../trpc.ts';
import { idempotently } from '../idempotency.ts';
import * as agents from '../../services/setup/agents.ts';
import { listPersonalityPresets, listProviders, listTemplates } from '../../services/setup/catalogue.ts';
import { createCompany, getCompany } from '../../services/setup/company.ts';
import { completeSetup } from '../../services/setup/complete.ts';
import * as locales from '../../services/setup/locales.ts';
import { setupStatus } from '../../services/setup/status.ts';
import {
  AgentIndexInput,
  AgentListInput,
  AgentPage,
  AvailableLocalesResponse,
  PresetListInput,
  PresetPage,
  SetupAgentRequest,
  SetupAgentResponse,
  SetupAgentSummary,
  SetupCompanyInfoResponse,
  SetupCompanyRequest,
  SetupCompanyResponse,
  SetupCompleteResponse,
  SetupNameLocalesRequest,
  SetupNameLocalesResponse,
  SetupProvidersResponse,
  SetupStatusResponse,
  TemplateList,
  UpdateAgentModelInput,
  UpdateAgentNameInput,
  UpdateAgentPersonalityInput,
} from '../../contracts/setup.ts';

const tags = ['setup'];
// operationIds are `<area>_<procedure>` unless that would clash with a schema in generated clients
// (`setup_status` → `SetupStatusResponse`); those three name the action instead.
const COMPLETE = 'Setup is already complete: the wizard is read-only.';
const NO_AGENT = 'No agent has this index.';
const AGENT_EDIT_ERRORS = { 3000: NO_AGENT, 4000: COMPLETE } as const;

export const setupRouter = router({
  status: unlimitedProcedure
    .meta({ openapi: { method: 'GET', path: '/setup/status', operationId: 'setup_getStatus', tags, summary: 'What first-run setup still needs' } })
    .output(SetupStatusResponse)
    .query(({ ctx }) => setupStatus({ em: ctx.em, providers: ctx.deps.providers })),

  templates: authedProcedure
    .meta({ apiKey: 'setup:read', openapi: { method: 'GET', path: '/setup/templates', tags, summary: 'The builtin company templates' } })
    .output(TemplateList)
    .query(() => listTemplates()),

  providers: authedProcedure
    .meta({ apiKey: 'setup:read', openapi: { method: 'GET', path: '/setup/providers', operationId: 'setup_listProviders', tags, summary: 'The provider catalogue: valid model_provider and model_id values' } })
    .output(SetupProvidersResponse)
    .query(({ ctx }) => listProviders({ providers: ctx.deps.providers })),

  getCompany: authedProcedure
    .meta({ apiKey: 'setup:read', openapi: { method: 'GET', path: '/setup/company', tags, summary: 'The company as last created' }, errors: { 3000: 'No company has been created yet.' } })
    .output(SetupCompanyInfoResponse)
    .query(({ ctx }) => getCompany({ em: ctx.em })),

  createCompany: ceoProcedure
    .meta({
      openapi: { method: 'POST', path: '/setup/company', tags, summary: 'Create the company, optionally from a template that replaces the roster' },
      rest: { status: 201 },
      errors: {
        2000: 'Unknown template, or a template while no model provider is configured.',
        4000: `${COMPLETE} Or no template while agents exist (only a template replaces the roster).`,
      },
      limits: { op: 'setup.company' },
    })
    .input(SetupCompanyRequest)
    .output(SetupCompanyResponse)
    .mutation(({ ctx, input }) => createCompany({ em: ctx.em, clock: ctx.deps.clock, providers: ctx.deps.providers, actor: ctx.actor }, input)),

  createAgent: ceoProcedure
    .meta({
      openapi: { method: 'POST', path: '/setup/agent', tags, summary: 'Add an agent to the roster' },
      rest: { status: 201, idempotencyKey: true },
      errors: { 2000: 'Unknown personality preset, model provider or model.', 4000: `${COMPLETE} Or the roster already has 100 agents.` },
      limits: { op: 'setup.agent' },
    })
    .input(SetupAgentRequest)
    .output(SetupAgentResponse)
    .mutation(({ ctx, input }) =>
      idempotently(ctx, { operation: 'setup.createAgent', input, output: SetupAgentResponse }, (em) =>
        agents.createAgent({ em, clock: ctx.deps.clock, providers: ctx.deps.providers, actor: ctx.actor }, input),
      ),
    ),

  listAgents: authedProcedure
    .meta({ apiKey: 'setup:read', openapi: { method: 'GET', path: '/setup/agents', tags, summary: 'The roster, by agent_index' }, rest: { list: true } })
    .input(AgentListInput)
    .output(AgentPage)
    .query(({ ctx, input }) => agents.listAgents({ em: ctx.em, secret: ctx.deps.secret }, input)),

  randomizeAgentName: ceoProcedure
    .meta({ openapi: { method: 'POST', path: '/setup/agents/{agent_index}/randomize-name', tags, summary: 'Give an agent a new random name from the chosen locales' }, errors: AGENT_EDIT_ERRORS })
    .input(AgentIndexInput)
    .output(SetupAgentSummary)
    .mutation(({ ctx, input }) => agents.randomizeAgentName({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, input)),

  updateAgentModel: ceoProcedure
    .meta({
      openapi: { method: 'PUT', path: '/setup/agents/{agent_index}/model', tags, summary: "Change an agent's model" },
      errors: { ...AGENT_EDIT_ERRORS, 2000: 'Unknown model provider or model.' },
    })
    .input(UpdateAgentModelInput)
    .output(SetupAgentSummary)
    .mutation(({ ctx, input }) => agents.updateAgentModel({ em: ctx.em, clock: ctx.deps.clock, providers: ctx.deps.providers, actor: ctx.actor }, input)),

  updateAgentName: ceoProcedure
    .meta({ openapi: { method: 'PUT', path: '/setup/agents/{agent_index}/name', tags, summary: 'Rename an agent' }, errors: AGENT_EDIT_ERRORS })
    .input(UpdateAgentNameInput)
    .output(SetupAgentSummary)
    .mutation(({ ctx, input }) => agents.updateAgentName({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, input)),

  updateAgentPersonality: ceoProcedure
    .meta({
      openapi: { method: 'PUT', path: '/setup/agents/{agent_index}/personality', tags, summary: "Change an agent's personality preset" },
      errors: { ...AGENT_EDIT_ERRORS, 2000: 'Unknown personality preset.' },
    })
    .input(UpdateAgentPersonalityInput)
    .output(SetupAgentSummary)
    .mutation(({ ctx, input }) => agents.updateAgentPersonality({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, input)),

  availableLocales: authedProcedure
    .meta({ apiKey: 'setup:read', openapi: { method: 'GET', path: '/setup/name-locales/available', tags, summary: 'Every name locale, by region' } })
    .output(AvailableLocalesResponse)
    .query(() => locales.availableLocales()),

  getLocales: authedProcedure
    .meta({ apiKey: 'setup:read', openapi: { method: 'GET', path: '/setup/name-locales', tags, summary: 'The chosen name locales' } })
    .output(SetupNameLocalesResponse)
    .query(({ ctx }) => locales.getLocales({ em: ctx.em })),

  setLocales: ceoProcedure
    .meta({
      openapi: { method: 'PUT', path: '/setup/name-locales', tags, summary: 'Choose the name locales agent names are drawn from' },
      errors: { 2000: 'Unknown or repeated codes, `__all__` mixed with codes, or not 1..100 codes.', 4000: COMPLETE },
    })
    .input(SetupNameLocalesRequest)
    .output(SetupNameLocalesResponse)
    .mutation(({ ctx, input }) => locales.setLocales({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, input)),

  personalityPresets: authedProcedure
    .meta({ apiKey: 'setup:read', openapi: { method: 'GET', path: '/setup/personality-presets', tags, summary: 'The personality presets, by name' }, rest: { list: true } })
    .input(PresetListInput)
    .output(PresetPage)
    .query(({ ctx, input }) => listPersonalityPresets({ secret: ctx.deps.secret }, input)),

  complete: ceoProcedure
    .meta({
      openapi: { method: 'POST', path: '/setup/complete', operationId: 'setup_completeWizard', tags, summary: 'Finish the wizard (one way)' },
      rest: { status: 201 },
      errors: {
        2000: 'No company yet, no model provider configured, or an agent whose model the catalogue no longer offers.',
        4000: COMPLETE,
      },
      limits: { op: 'setup.complete' },
    })
    .output(SetupCompleteResponse)
    .mutation(({ ctx }) => completeSetup({ em: ctx.em, clock: ctx.deps.clock, providers: ctx.deps.providers, actor: ctx.actor })),
});
