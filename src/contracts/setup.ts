// Schemas of the setup wizard endpoints (CONTRACT §4.4).
import { z } from 'zod';
import { page, pageQueryShape } from './pagination.ts';
import { ALL_NAME_LOCALES, PERSONALITY_PRESET_NAMES, CatalogueProvider, AgentLevel, ModelTier, TemplateInfo } from './catalogue.ts';

/**
 * A personality preset name. The document lists the presets; validation stays a string because an unknown
 * preset is a business-rule error (400/2000, CONTRACT §4.4), not a shape error.
 */
const PresetName = z.string().min(1).max(64).meta({ enum: [...PERSONALITY_PRESET_NAMES] });

/** Trimmed free text that must keep at least one character. */
const text = (max: number) => z.string().trim().min(1).max(max);

export const SetupStatusResponse = z
  .object({
    needs_admin: z.boolean().describe('No CEO exists yet: first-run administrator setup (POST /auth/setup) is still due.'),
    needs_setup: z.boolean().describe('The wizard has not been completed.'),
    has_providers: z.boolean().describe('The provider catalogue offers at least one provider.'),
    has_name_locales: z.boolean().describe('Name locales were explicitly chosen.'),
    has_company: z.boolean(),
    has_agents: z.boolean(),
    min_password_length: z.int(),
  })
  .meta({ id: 'SetupStatusResponse' });
export type SetupStatusResponse = z.infer<typeof SetupStatusResponse>;

export const TemplateInfoResponse = TemplateInfo.meta({ id: 'TemplateInfoResponse' });
export const TemplateList = z.array(TemplateInfoResponse);

/** The provider catalogue as the service loaded it (PROVIDERS_FILE), so clients can fill model_provider/model_id. */
export const ProviderInfoResponse = CatalogueProvider.meta({ id: 'ProviderInfoResponse' });
export const SetupProvidersResponse = z
  .object({ providers: z.array(ProviderInfoResponse).describe('In catalogue order; each model with its tier.') })
  .meta({ id: 'SetupProvidersResponse' });
export type SetupProvidersResponse = z.infer<typeof SetupProvidersResponse>;

/** Path parameter: the agent's position in the roster. The REST facade turns digits into a number. */
const AgentIndex = z.int().min(0).describe('Position of the agent in the roster (0-based).');

export const SetupAgentSummary = z
  .object({
    agent_index: z.int().min(0),
    name: z.string(),
    role: z.string(),
    department: z.string(),
    level: AgentLevel,
    model_provider: z.string(),
    model_id: z.string(),
    tier: ModelTier.describe('Tier of the assigned model.'),
    personality_preset: z.string().meta({ enum: [...PERSONALITY_PRESET_NAMES] }),
  })
  .meta({ id: 'SetupAgentSummary' });
export type SetupAgentSummary = z.infer<typeof SetupAgentSummary>;

export const SetupCompanyRequest = z
  .strictObject({
    company_name: text(200),
    description: z.string().max(1000).nullish(),
    template_name: z.string().min(1).max(128).nullish().describe('A builtin template (GET /setup/templates); replaces the agent roster.'),
  })
  .meta({ id: 'SetupCompanyRequest' });

/** The company as last created (GET /setup/company); POST /setup/company adds the roster. */
export const SetupCompanyInfoResponse = z
  .object({
    company_name: z.string(),
    description: z.string().nullable(),
    template_applied: z.string().nullable(),
    department_count: z.int().min(0).describe('Distinct departments of the roster.'),
    agent_count: z.int().min(0).describe('Agents in the roster.'),
  })
  .meta({ id: 'SetupCompanyInfoResponse' });
export type SetupCompanyInfoResponse = z.infer<typeof SetupCompanyInfoResponse>;

export const SetupCompanyResponse = SetupCompanyInfoResponse.extend({ agents: z.array(SetupAgentSummary).describe('The whole roster after the call.') }).meta({
  id: 'SetupCompanyResponse',
});
export type SetupCompanyResponse = z.infer<typeof SetupCompanyResponse>;

export const SetupAgentRequest = z
  .strictObject({
    name: text(200),
    role: text(100),
    level: AgentLevel.default('mid'),
    personality_preset: PresetName.default('pragmatic_builder').describe('One of GET /setup/personality-presets.'),
    model_provider: z.string().min(1).max(64),
    model_id: z.string().min(1).max(128),
    department: text(100).default('engineering'),
    budget_limit_monthly: z.number().min(0).max(1_000_000).nullish(),
  })
  .meta({ id: 'SetupAgentRequest' });

export const SetupAgentResponse = SetupAgentSummary.pick({
  agent_index: true,
  name: true,
  role: true,
  department: true,
  model_provider: true,
  model_id: true,
}).meta({ id: 'SetupAgentResponse' });
export type SetupAgentResponse = z.infer<typeof SetupAgentResponse>;

export const AgentListInput = z.object(pageQueryShape);
export const AgentPage = page(SetupAgentSummary);

export const AgentIndexInput = z.strictObject({ agent_index: AgentIndex });
export const UpdateAgentModelInput = z.strictObject({ agent_index: AgentIndex, model_provider: z.string().min(1).max(64), model_id: z.string().min(1).max(128) }).meta({ id: 'UpdateAgentModelRequest' });
export const UpdateAgentNameInput = z.strictObject({ agent_index: AgentIndex, name: text(200) }).meta({ id: 'UpdateAgentNameRequest' });
export const UpdateAgentPersonalityInput = z.strictObject({ agent_index: AgentIndex, personality_preset: PresetName }).meta({ id: 'UpdateAgentPersonalityRequest' });

export const AvailableLocalesResponse = z
  .object({
    regions: z.record(z.string(), z.array(z.string())).describe(`Region → locale codes (${String(ALL_NAME_LOCALES.length)} codes in all).`),
    display_names: z.record(z.string(), z.string()).describe('Locale code → human-readable label.'),
  })
  .meta({ id: 'AvailableLocalesResponse' });
export type AvailableLocalesResponse = z.infer<typeof AvailableLocalesResponse>;

export const SetupNameLocalesResponse = z
  .object({ locales: z.array(z.string()).describe('The chosen codes, or ["__all__"] for every locale (also when none were chosen).') })
  .meta({ id: 'SetupNameLocalesResponse' });
export type SetupNameLocalesResponse = z.infer<typeof SetupNameLocalesResponse>;

// The count bounds are checked by the service so that every selection problem is one 400/2000.
export const SetupNameLocalesRequest = z
  .strictObject({
    locales: z.array(z.string()).describe('1..100 distinct codes of GET /setup/name-locales/available, or exactly ["__all__"].'),
  })
  .meta({ id: 'SetupNameLocalesRequest' });

export const PersonalityPresetInfoResponse = z
  .object({ name: z.string().meta({ enum: [...PERSONALITY_PRESET_NAMES] }), description: z.string() })
  .meta({ id: 'PersonalityPresetInfoResponse' });
export type PersonalityPresetInfoResponse = z.infer<typeof PersonalityPresetInfoResponse>;
export const PresetListInput = z.object(pageQueryShape);
export const PresetPage = page(PersonalityPresetInfoResponse);

export const SetupCompleteResponse = z
  .object({ setup_complete: z.literal(true), completed_at: z.iso.datetime() })
  .meta({ id: 'SetupCompleteResponse' });
export type SetupCompleteResponse = z.infer<typeof SetupCompleteResponse>;
