// Applying each builtin template yields a valid roster; template names and models are chosen as documented.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPersonalityPreset } from '../src/data/personalityPresets.ts';
import { findModel, parseProviderCatalogue } from '../src/data/providerCatalogue.ts';
import { TEMPLATES, findTemplate } from '../src/data/templates.ts';
import { templateRoster } from '../src/services/setup/company.ts';
import { distinctName } from '../src/services/setup/names.ts';
import type { TestService } from './helpers/service.ts';
import { startWithCeo, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo());
});
afterAll(() => svc.close());

describe('POST /api/v1/setup/company with each builtin template', () => {
  it.each(TEMPLATES.map((t) => [t.name, t] as const))('%s yields a valid roster: presets exist, models are in the catalogue', async (_, template) => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/api/v1/setup/company',
      headers: ceo.headers,
      payload: { company_name: `Co ${template.name}`, template_name: template.name },
    });
    expect(res.statusCode).toBe(201);
    const data = res.json().data;
    expect(data).toMatchObject({
      company_name: `Co ${template.name}`,
      template_applied: template.name,
      agent_count: template.agents.length,
      department_count: template.departments.length,
    });
    const listed = (await ceo.caller.setup.listAgents({ limit: 200 })).items;
    expect(listed).toEqual(data.agents);
    expect(listed.map((a) => a.agent_index)).toEqual(template.agents.map((_a, i) => i));
    listed.forEach((agent, i) => {
      const wanted = template.agents[i]!;
      const where = `${template.name}[${String(i)}]`;
      expect(agent, where).toMatchObject({ role: wanted.role, department: wanted.department, level: wanted.level, personality_preset: wanted.personality_preset });
      expect(isPersonalityPreset(agent.personality_preset), where).toBe(true);
      const model = findModel(svc.deps.providers, agent.model_provider, agent.model_id);
      expect(model, where).toBeDefined();
      // The default catalogue offers every tier, so each agent gets a model of exactly its tier.
      expect(model?.tier, where).toBe(wanted.tier);
      expect(agent.tier, where).toBe(wanted.tier);
      expect(agent.name.trim().split(/\s+/).length, where).toBeGreaterThanOrEqual(2);
    });
    expect(new Set(listed.map((a) => a.name)).size).toBe(listed.length);
  });
});

describe('templateRoster', () => {
  it('gives an agent the nearest offered tier when its own is missing', async () => {
    const onlyMedium = parseProviderCatalogue(
      { providers: [{ name: 'acme', display_name: 'Acme', models: [{ id: 'acme-m', display_name: 'M', tier: 'medium' }] }] },
      'test',
    );
    const roster = await templateRoster(findTemplate('full_company')!, onlyMedium, ['en_US']);
    expect(roster.every((a) => a.modelProvider === 'acme' && a.modelId === 'acme-m' && a.tier === 'medium')).toBe(true);
  });

  it('is refused with 400/2000 when the catalogue is empty', async () => {
    await expect(templateRoster(findTemplate('startup')!, { providers: [] }, null)).rejects.toThrow(expect.objectContaining({ errorCode: 2000 }));
  });
});

describe('distinctName', () => {
  it('returns the first generated name not yet taken', () => {
    const names = ['Ann Lee', 'Bo Chen', 'Cy Diaz'];
    let i = 0;
    expect(distinctName(() => names[i++] ?? 'x', new Set(['Ann Lee', 'Bo Chen']))).toBe('Cy Diaz');
  });

  it('numbers the name when every draw collides', () => {
    expect(distinctName(() => 'Ann Lee', new Set(['Ann Lee']))).toBe('Ann Lee 2');
    expect(distinctName(() => 'Ann Lee', new Set(['Ann Lee', 'Ann Lee 2', 'Ann Lee 3']))).toBe('Ann Lee 4');
  });
});
