// Builtin templates and personality presets: the names the contract fixes, and every template being usable as shipped.
import { describe, it, expect } from 'vitest';
import { PERSONALITY_PRESETS, isPersonalityPreset, findPersonalityPreset } from '../src/data/personalityPresets.ts';
import { CompanyTemplate, TEMPLATES, findTemplate, toTemplateInfo } from '../src/data/templates.ts';
import { loadProviderCatalogue, pickModelForTier } from '../src/data/providerCatalogue.ts';
import { TemplateInfo } from '../src/contracts/catalogue.ts';

const CONTRACT_PRESETS = [
  'client_advisor', 'code_craftsman', 'communication_bridge', 'creative_innovator', 'data_driven_optimizer',
  'devil_advocate', 'disciplined_executor', 'eager_learner', 'empathetic_mentor', 'growth_hacker',
  'independent_researcher', 'methodical_analyst', 'pragmatic_builder', 'process_optimizer', 'quality_guardian',
  'rapid_prototyper', 'security_sentinel', 'strategic_planner', 'systems_thinker', 'team_diplomat',
  'technical_communicator', 'user_advocate', 'visionary_leader',
];
const CONTRACT_TEMPLATES = [
  'agency', 'consultancy', 'data_team', 'dev_shop', 'full_company', 'growth_marketing', 'product_team',
  'research_lab', 'security_team', 'solo_founder', 'startup', 'support_desk',
];
const CONTRACT_LEVELS = ['junior', 'mid', 'senior', 'lead', 'principal', 'director', 'vp', 'c_suite'];

describe('personality presets', () => {
  it('are the 23 contract presets, unique and sorted by name', () => {
    const names = PERSONALITY_PRESETS.map((p) => p.name);
    expect(names).toEqual(CONTRACT_PRESETS);
    expect(new Set(names).size).toBe(23);
    expect([...names].sort()).toEqual(names);
  });

  it('each has a one-line description and roster traits', () => {
    for (const preset of PERSONALITY_PRESETS) {
      expect(preset.description.length).toBeGreaterThan(20);
      expect(preset.description).not.toContain('\n');
      expect(preset.traits.length).toBeGreaterThanOrEqual(3);
    }
  });

  it('isPersonalityPreset accepts exactly the preset names', () => {
    expect(isPersonalityPreset('pragmatic_builder')).toBe(true);
    expect(isPersonalityPreset('Pragmatic_Builder')).toBe(false);
    expect(isPersonalityPreset('benevolent_overlord')).toBe(false);
    expect(findPersonalityPreset('devil_advocate')?.name).toBe('devil_advocate');
    expect(findPersonalityPreset('nope')).toBeUndefined();
  });
});

describe('builtin templates', () => {
  it('are exactly the 12 contract templates', () => {
    expect(TEMPLATES.map((t) => t.name)).toEqual(CONTRACT_TEMPLATES);
  });

  it('every agent uses an existing preset, a valid level and one of its template departments', () => {
    for (const template of TEMPLATES) {
      expect(template.agents.length, template.name).toBeGreaterThan(0);
      expect(template.agents.length, template.name).toBeLessThanOrEqual(100);
      expect(new Set(template.departments).size, template.name).toBe(template.departments.length);
      for (const agent of template.agents) {
        const where = `${template.name}: ${agent.role}`;
        expect(isPersonalityPreset(agent.personality_preset), where).toBe(true);
        expect(CONTRACT_LEVELS, where).toContain(agent.level);
        expect(template.departments, where).toContain(agent.department);
        expect(agent.role.length, where).toBeGreaterThanOrEqual(1);
        expect(agent.role.length, where).toBeLessThanOrEqual(100);
      }
    }
  });

  it('every department of a template is staffed', () => {
    for (const template of TEMPLATES) {
      const staffed = new Set(template.agents.map((a) => a.department));
      expect([...staffed].sort(), template.name).toEqual([...template.departments].sort());
    }
  });

  it('have plausible sizes: a solo founder is tiny, a full company is large', () => {
    expect(findTemplate('solo_founder')?.agents.length).toBeLessThanOrEqual(2);
    const full = findTemplate('full_company')?.agents.length ?? 0;
    expect(full).toBeGreaterThanOrEqual(15);
    expect(full).toBeLessThanOrEqual(20);
    const largest = Math.max(...TEMPLATES.map((t) => t.agents.length));
    expect(findTemplate('full_company')?.agents.length).toBe(largest);
  });

  it("every agent's tier resolves to a model of that tier in the default catalogue", () => {
    const catalogue = loadProviderCatalogue();
    for (const template of TEMPLATES) {
      for (const agent of template.agents) {
        const choice = pickModelForTier(catalogue, agent.tier);
        expect(choice, `${template.name}: ${agent.role}`).toBeDefined();
        expect(choice?.model.tier).toBe(agent.tier);
      }
    }
  });

  it('findTemplate finds by exact name only', () => {
    expect(findTemplate('startup')?.display_name).toBe('Startup');
    expect(findTemplate('Startup')).toBeUndefined();
    expect(findTemplate('unicorn')).toBeUndefined();
  });

  it('toTemplateInfo projects the TemplateInfoResponse fields', () => {
    for (const template of TEMPLATES) {
      const info = toTemplateInfo(template);
      expect(TemplateInfo.parse(info)).toEqual(info);
      expect(info).toMatchObject({
        name: template.name,
        source: 'builtin',
        agent_count: template.agents.length,
        department_count: template.departments.length,
        autonomy_level: template.autonomy_level,
        workflow: template.workflow,
      });
      expect(Object.keys(info).sort()).toEqual([
        'agent_count', 'autonomy_level', 'department_count', 'description', 'display_name', 'name', 'source', 'tags',
        'workflow',
      ]);
    }
  });

  it('the template schema rejects an agent placed in a department the template does not have', () => {
    const startup = findTemplate('startup')!;
    const broken = {
      ...startup,
      agents: [...startup.agents, { role: 'Lawyer', department: 'legal', level: 'senior', personality_preset: 'devil_advocate', tier: 'large' }],
    };
    const result = CompanyTemplate.safeParse(broken);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['agents', startup.agents.length, 'department']);
  });
});
