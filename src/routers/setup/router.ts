// setup.{status, templates, createCompany, createAgent, listAgents, randomizeAgentName, updateAgentModel, updateAgentName, updateAgentPersonality, availableLocales, getLocales, setLocales, personalityPresets, complete}
import { authedProcedure, ceoProcedure, router, unlimitedProcedure } from '../../trpc.ts';
import { idempotently } from '../idempotency.ts';
import * as agents from '../../services/setup/agents.ts';
import { listPersonalityPresets, listTemplates } from '../../services/setup/catalogue.ts';
import { createCompany } from '../../services/setup/company.ts';
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
  SetupCompanyRequest,
  SetupCompanyResponse,
  SetupCompleteResponse,
  SetupNameLocalesRequest,
  SetupNameLocalesResponse,
  SetupStatusResponse,
  TemplateList,
  UpdateAgentModelInput,
  UpdateAgentNameInput,
  UpdateAgentPersonalityInput,
} from './schemas.ts';

const tags = ['setup'];
const READ_ERRORS = [401, 429, 500, 503];
const LIST_ERRORS = [400, 401, 429, 500, 503];
const CREATE_ERRORS = [400, 401, 403, 409, 429, 500, 503];
const EDIT_ERRORS = [400, 401, 403, 404, 409, 429, 500, 503];

export const setupRouter = router({
  status: unlimitedProcedure
    .meta({ openapi: { method: 'GET', path: '/setup/status', tags, protect: false, summary: 'What first-run setup still needs', errorResponses: [500] } })
    .output(SetupStatusResponse)
    .query(({ ctx }) => setupStatus(ctx.em, ctx.deps)),

  templates: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/setup/templates', tags, summary: 'The builtin company templates', errorResponses: READ_ERRORS } })
    .output(TemplateList)
    .query(() => listTemplates()),

  createCompany: ceoProcedure
    .meta({
      openapi: { method: 'POST', path: '/setup/company', tags, summary: 'Create the company, optionally from a template that replaces the roster', errorResponses: CREATE_ERRORS },
      rest: { status: 201 },
      limits: { op: 'setup.company' },
    })
    .input(SetupCompanyRequest)
    .output(SetupCompanyResponse)
    .mutation(({ ctx, input }) => createCompany(ctx.em, ctx.deps, input)),

  createAgent: ceoProcedure
    .meta({
      openapi: { method: 'POST', path: '/setup/agent', tags, summary: 'Add an agent to the roster', errorResponses: CREATE_ERRORS },
      rest: { status: 201 },
      limits: { op: 'setup.agent' },
    })
    .input(SetupAgentRequest)
    .output(SetupAgentResponse)
    .mutation(({ ctx, input }) =>
      idempotently(ctx, { operation: 'setup.createAgent', input, output: SetupAgentResponse }, (em) => agents.createAgent(em, ctx.deps, input)),
    ),

  listAgents: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/setup/agents', tags, summary: 'The roster, by agent_index', errorResponses: LIST_ERRORS }, rest: { list: true } })
    .input(AgentListInput)
    .output(AgentPage)
    .query(({ ctx, input }) => agents.listAgents(ctx.em, ctx.deps, input)),

  randomizeAgentName: ceoProcedure
    .meta({ openapi: { method: 'POST', path: '/setup/agents/{agent_index}/randomize-name', tags, summary: 'Give an agent a new random name from the chosen locales', errorResponses: EDIT_ERRORS } })
    .input(AgentIndexInput)
    .output(SetupAgentSummary)
    .mutation(({ ctx, input }) => agents.randomizeAgentName(ctx.em, ctx.deps, input)),

  updateAgentModel: ceoProcedure
    .meta({ openapi: { method: 'PUT', path: '/setup/agents/{agent_index}/model', tags, summary: "Change an agent's model", errorResponses: EDIT_ERRORS } })
    .input(UpdateAgentModelInput)
    .output(SetupAgentSummary)
    .mutation(({ ctx, input }) => agents.updateAgentModel(ctx.em, ctx.deps, input)),

  updateAgentName: ceoProcedure
    .meta({ openapi: { method: 'PUT', path: '/setup/agents/{agent_index}/name', tags, summary: 'Rename an agent', errorResponses: EDIT_ERRORS } })
    .input(UpdateAgentNameInput)
    .output(SetupAgentSummary)
    .mutation(({ ctx, input }) => agents.updateAgentName(ctx.em, ctx.deps, input)),

  updateAgentPersonality: ceoProcedure
    .meta({ openapi: { method: 'PUT', path: '/setup/agents/{agent_index}/personality', tags, summary: "Change an agent's personality preset", errorResponses: EDIT_ERRORS } })
    .input(UpdateAgentPersonalityInput)
    .output(SetupAgentSummary)
    .mutation(({ ctx, input }) => agents.updateAgentPersonality(ctx.em, ctx.deps, input)),

  availableLocales: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/setup/name-locales/available', tags, summary: 'Every name locale, by region', errorResponses: READ_ERRORS } })
    .output(AvailableLocalesResponse)
    .query(() => locales.availableLocales()),

  getLocales: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/setup/name-locales', tags, summary: 'The chosen name locales', errorResponses: READ_ERRORS } })
    .output(SetupNameLocalesResponse)
    .query(({ ctx }) => locales.getLocales(ctx.em)),

  setLocales: ceoProcedure
    .meta({ openapi: { method: 'PUT', path: '/setup/name-locales', tags, summary: 'Choose the name locales agent names are drawn from', errorResponses: CREATE_ERRORS } })
    .input(SetupNameLocalesRequest)
    .output(SetupNameLocalesResponse)
    .mutation(({ ctx, input }) => locales.setLocales(ctx.em, ctx.deps, input)),

  personalityPresets: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/setup/personality-presets', tags, summary: 'The personality presets, by name', errorResponses: LIST_ERRORS }, rest: { list: true } })
    .input(PresetListInput)
    .output(PresetPage)
    .query(({ ctx, input }) => listPersonalityPresets(ctx.deps, input)),

  complete: ceoProcedure
    .meta({
      openapi: { method: 'POST', path: '/setup/complete', tags, summary: 'Finish the wizard (one way)', errorResponses: CREATE_ERRORS },
      rest: { status: 201 },
      limits: { op: 'setup.complete' },
    })
    .output(SetupCompleteResponse)
    .mutation(({ ctx }) => completeSetup(ctx.em, ctx.deps)),
});
