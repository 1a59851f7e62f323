// GET /setup/company and GET /setup/providers: what any signed-in client reads back from the wizard (CONTRACT §4.4 rev. 2).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTemplate } from '../src/data/templates.ts';
import { PROBLEM } from './helpers/http.ts';
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, startWithCeoAndObserver, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
let observer: TestUser;
let doc: OpenApiDocument;
const dir = mkdtempSync(join(tmpdir(), 'agent-org-setup-reads-'));
const fresh: TestService[] = [];
beforeAll(async () => {
  ({ svc, ceo, observer } = await startWithCeoAndObserver());
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(async () => {
  await Promise.all([svc, ...fresh].map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** A service of its own, for tests that need a state no other test may have touched (no company yet, completed). */
async function freshService(env: Record<string, string> = {}): Promise<TestService> {
  const service = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', ...env } });
  fresh.push(service);
  return service;
}

/** app.inject of `/api/v1${url}`, checked against the OpenAPI document. */
async function get(service: TestService, url: string, headers: Record<string, string> = {}) {
  const res = await service.app.inject({ method: 'GET', url: `/api/v1${url}`, headers });
  expectResponseConforms(doc, 'GET', `/api/v1${url}`, res);
  return res;
}

describe('GET /api/v1/setup/company', () => {
  it('is 404/3000 until the company is created, then the company; still readable after completion', async () => {
    const own = await freshService();
    const chief = await createUser(own, { role: 'ceo' });
    for (const headers of [chief.headers, { ...chief.headers, ...PROBLEM }]) {
      const res = await get(own, '/setup/company', headers);
      expect(res.statusCode).toBe(404);
      const problem = headers === chief.headers ? res.json().error_detail : res.json();
      expect(problem).toMatchObject({ error_code: 3000, error_category: 'not_found' });
    }
    await expect(chief.caller.setup.getCompany()).rejects.toMatchObject({ code: 'NOT_FOUND' });

    await chief.caller.setup.createCompany({ company_name: 'Acme', description: 'We make anvils' });
    await chief.caller.setup.complete();
    const res = await get(own, '/setup/company', chief.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: { company_name: 'Acme', description: 'We make anvils', template_applied: null, department_count: 0, agent_count: 0 },
      error: null,
      error_detail: null,
      success: true,
    });
  });

  it('is the company as last created, for any signed-in user', async () => {
    await ceo.caller.setup.createCompany({ company_name: 'First', description: 'old', template_name: 'startup' });
    await ceo.caller.setup.createCompany({ company_name: 'Acme Labs', template_name: 'research_lab' });
    const template = findTemplate('research_lab')!;
    const expected = {
      company_name: 'Acme Labs',
      description: null,
      template_applied: 'research_lab',
      department_count: template.departments.length,
      agent_count: template.agents.length,
    };
    const res = await get(svc, '/setup/company', observer.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual(expected);
    expect(await observer.caller.setup.getCompany()).toEqual(expected);
  });

  it('counts the roster as it is now: an agent added after the company counts, in its department', async () => {
    const created = await ceo.caller.setup.createCompany({ company_name: 'Acme', template_name: 'solo_founder' });
    expect(created.agents.some((a) => a.department === 'field-research')).toBe(false);
    await ceo.caller.setup.createAgent({ name: 'Added Later', role: 'Scout', department: 'field-research', model_provider: 'openai', model_id: 'gpt-5' });
    expect(await observer.caller.setup.getCompany()).toMatchObject({
      company_name: 'Acme',
      template_applied: 'solo_founder',
      agent_count: created.agent_count + 1,
      department_count: created.department_count + 1,
    });
  });

  it('agrees with what POST /setup/company answered', async () => {
    const { agents, ...company } = await ceo.caller.setup.createCompany({ company_name: 'Echo', description: '', template_name: 'agency' });
    expect(agents).toHaveLength(company.agent_count);
    expect(await ceo.caller.setup.getCompany()).toEqual(company);
  });

  it('needs a signed-in user (401/1000)', async () => {
    const res = await get(svc, '/setup/company');
    expect(res.statusCode).toBe(401);
    expect(res.json().error_detail).toMatchObject({ error_code: 1000 });
    await expect(svc.caller().setup.getCompany()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});

describe('GET /api/v1/setup/providers', () => {
  it('lists the provider catalogue the service loaded, for any signed-in user', async () => {
    const res = await get(svc, '/setup/providers', observer.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual(svc.deps.providers);
    expect(res.json().data.providers.length).toBeGreaterThan(0);
    expect(await observer.caller.setup.providers()).toEqual(svc.deps.providers);
  });

  it('every listed model is accepted for an agent, with the listed tier', async () => {
    await ceo.caller.setup.createCompany({ company_name: 'Acme', template_name: 'solo_founder' });
    const { providers } = await observer.caller.setup.providers();
    for (const provider of providers) {
      for (const model of provider.models) {
        const agent = await ceo.caller.setup.updateAgentModel({ agent_index: 0, model_provider: provider.name, model_id: model.id });
        expect(agent).toMatchObject({ model_provider: provider.name, model_id: model.id, tier: model.tier });
      }
    }
  });

  it('is the operator\'s PROVIDERS_FILE when one is configured, also an empty one', async () => {
    const custom = { providers: [{ name: 'acme', display_name: 'Acme AI', models: [{ id: 'acme-1', display_name: 'Acme One', tier: 'small' }] }] };
    writeFileSync(join(dir, 'custom.json'), JSON.stringify(custom));
    writeFileSync(join(dir, 'empty.json'), JSON.stringify({ providers: [] }));
    const [withCustom, withEmpty] = await Promise.all([
      freshService({ PROVIDERS_FILE: join(dir, 'custom.json') }),
      freshService({ PROVIDERS_FILE: join(dir, 'empty.json') }),
    ]);
    const reader = await createUser(withCustom);
    expect((await get(withCustom, '/setup/providers', reader.headers)).json().data).toEqual(custom);
    const other = await createUser(withEmpty);
    expect((await get(withEmpty, '/setup/providers', other.headers)).json().data).toEqual({ providers: [] });
  });

  it('needs a signed-in user (401/1000)', async () => {
    for (const headers of [{}, PROBLEM]) {
      const res = await get(svc, '/setup/providers', headers);
      expect(res.statusCode).toBe(401);
    }
    await expect(svc.caller().setup.providers()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
