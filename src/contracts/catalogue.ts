// The setup wizard's closed vocabularies: name locale codes, personality preset names, agent levels, model
// tiers, autonomy levels, template names, TemplateInfo and the provider catalogue's schema.
import { z } from 'zod';
import { AGENT_LEVELS } from './values.ts';

export const ALL_LOCALES_SENTINEL = '__all__';

/** The 57 codes, in region order. Codes follow SynthOrg's (Python Faker) spelling, not faker-js's. */
export const ALL_NAME_LOCALES = [
  // Africa
  'en_KE', 'en_NG', 'fr_DZ', 'ha_NG', 'ig_NG', 'sw', 'tw_GH', 'yo_NG', 'zu_ZA',
  // South Asia
  'en_IN', 'en_PK',
  // Southeast Asia
  'en_TH', 'id_ID', 'vi_VN',
  // Central Asia
  'az_AZ', 'uz_UZ',
  // North America
  'en_US', 'fr_CA',
  // Central America
  'es_MX',
  // South America
  'es_AR', 'es_CL', 'es_CO', 'pt_BR',
  // Pacific / Oceania
  'en_NZ',
  // Western Europe
  'de_AT', 'de_CH', 'de_DE', 'de_LI', 'de_LU', 'en_GB', 'en_IE', 'es_CA', 'es_ES', 'fr_BE', 'fr_CH', 'fr_FR',
  'ga_IE', 'it_IT', 'nl_BE', 'nl_NL', 'pt_PT',
  // Northern Europe
  'da_DK', 'et_EE', 'fi_FI', 'is_IS', 'lt_LT', 'lv_LV', 'no_NO', 'sv_SE',
  // Central / Eastern Europe
  'cs_CZ', 'hr_HR', 'hu_HU', 'pl_PL', 'ro_RO', 'sk_SK', 'sl_SI', 'tr_TR',
] as const;

export const NameLocale = z.enum(ALL_NAME_LOCALES);
export type NameLocale = z.infer<typeof NameLocale>;

export const PERSONALITY_PRESET_NAMES = [
  'client_advisor',
  'code_craftsman',
  'communication_bridge',
  'creative_innovator',
  'data_driven_optimizer',
  'devil_advocate',
  'disciplined_executor',
  'eager_learner',
  'empathetic_mentor',
  'growth_hacker',
  'independent_researcher',
  'methodical_analyst',
  'pragmatic_builder',
  'process_optimizer',
  'quality_guardian',
  'rapid_prototyper',
  'security_sentinel',
  'strategic_planner',
  'systems_thinker',
  'team_diplomat',
  'technical_communicator',
  'user_advocate',
  'visionary_leader',
] as const;

export const PersonalityPresetName = z.enum(PERSONALITY_PRESET_NAMES);
export type PersonalityPresetName = z.infer<typeof PersonalityPresetName>;

export const AgentLevel = z.enum(AGENT_LEVELS);
export type AgentLevel = z.infer<typeof AgentLevel>;

/** Ordered from most to least capable; pickModelForTier relies on this order for its fallback. */
export const MODEL_TIERS = ['large', 'medium', 'small'] as const;
export const ModelTier = z.enum(MODEL_TIERS, { error: 'expected one of large|medium|small' });
export type ModelTier = z.infer<typeof ModelTier>;

export const AUTONOMY_LEVELS = ['full', 'semi', 'supervised', 'locked'] as const;
export const AutonomyLevel = z.enum(AUTONOMY_LEVELS);
export type AutonomyLevel = z.infer<typeof AutonomyLevel>;

export const TEMPLATE_NAMES = [
  'agency',
  'consultancy',
  'data_team',
  'dev_shop',
  'full_company',
  'growth_marketing',
  'product_team',
  'research_lab',
  'security_team',
  'solo_founder',
  'startup',
  'support_desk',
] as const;
export const TemplateName = z.enum(TEMPLATE_NAMES);
export type TemplateName = z.infer<typeof TemplateName>;

export const TemplateInfo = z.strictObject({
  name: TemplateName,
  display_name: z.string(),
  description: z.string(),
  source: z.literal('builtin'),
  tags: z.array(z.string()),
  agent_count: z.int().nonnegative(),
  department_count: z.int().nonnegative(),
  autonomy_level: AutonomyLevel,
  workflow: z.string(),
});
export type TemplateInfo = z.infer<typeof TemplateInfo>;

export const CatalogueModel = z.object({
  id: z.string().min(1).max(128).regex(/^\S+$/, 'must not contain whitespace'),
  display_name: z.string().min(1).max(200),
  tier: ModelTier,
});
export type CatalogueModel = z.infer<typeof CatalogueModel>;

export const CatalogueProvider = z
  .object({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[a-z0-9][a-z0-9._-]*$/, 'must be lowercase letters, digits, ".", "_" or "-"'),
    display_name: z.string().min(1).max(200),
    models: z.array(CatalogueModel).min(1),
  })
  .superRefine((provider, ctx) => {
    const seen = new Set<string>();
    provider.models.forEach((model, i) => {
      if (seen.has(model.id)) {
        ctx.addIssue({ code: 'custom', path: ['models', i, 'id'], message: `duplicate model id ${model.id}` });
      }
      seen.add(model.id);
    });
  });
export type CatalogueProvider = z.infer<typeof CatalogueProvider>;

/** An empty provider list is valid: the wizard then reports has_providers false and cannot complete. */
export const ProviderCatalogue = z
  .object({ providers: z.array(CatalogueProvider) })
  .superRefine((catalogue, ctx) => {
    const seen = new Set<string>();
    catalogue.providers.forEach((provider, i) => {
      if (seen.has(provider.name)) {
        ctx.addIssue({ code: 'custom', path: ['providers', i, 'name'], message: `duplicate provider ${provider.name}` });
      }
      seen.add(provider.name);
    });
  });
export type ProviderCatalogue = z.infer<typeof ProviderCatalogue>;
