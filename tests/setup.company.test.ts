// POST /setup/company: creating the company with or without a template, roster replacement, and its 400/403/409 rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTemplate } from '../src/data/templates.ts';
import { sender } from './helpers/http.ts';
import type { TestService } from './helpers/service.ts';
import { createUser, startWithCeo, startWithCeoAndObserver, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
let observer: TestUser;
beforeAll(async () => {
  ({ svc, ceo, observer } = await startWithCeoAndObserver());
});
afterAll(() => svc.close());

const send = sender(() => svc, () => ceo);

const agent = (name: string) => ({ name, role: 'Engineer', model_provider: 'anthropic', model_id: 'claude-sonnet-4-5' });

/** A service whose wizard has no company and no agents yet, for a test that needs that state; closed when `work` ends. */
async function withNoCompany(work: (send: ReturnType<typeof sender>) => Promise<void>): Promise<void> {
  const own = await startWithCeo();
  try {
    await work(sender(() => own.svc, () => own.ceo));
  } finally {
    await own.svc.close();
  }
}

async function roster() {
  const res = await send('GET', '/setup/agents?limit=200');
  expect(res.statusCode).toBe(200);
  return res.json<{ data: { agent_index: number; name: string; role: string; department: string }[] }>().data;
}

describe('POST /api/v1/setup/company', () => {
  it('without a template and without agents creates the company (201) with an empty roster', async () => {
    await withNoCompany(async (send) => {
      const res = await send('POST', '/setup/company', { company_name: 'Acme', description: 'We make anvils' });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({
        data: { company_name: 'Acme', description: 'We make anvils', template_applied: null, department_count: 0, agents: [], agent_count: 0 },
        error: null,
        error_detail: null,
        success: true,
      });
      const status = await send('GET', '/setup/status');
      expect(status.json().data).toMatchObject({ has_company: true, has_agents: false, needs_setup: true });
    });
  });

  it('is repeatable before completion: the latest name and description win', async () => {
    await withNoCompany(async (send) => {
      expect((await send('POST', '/setup/company', { company_name: 'Acme', description: 'We make anvils' })).statusCode).toBe(201);
      const res = await send('POST', '/setup/company', { company_name: 'Acme Two' });
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toMatchObject({ company_name: 'Acme Two', description: null, template_applied: null });
    });
  });

  it('with a template replaces the roster with the template agents at positions 0..n-1', async () => {
    expect((await send('POST', '/setup/agent', agent('Manual Person'))).statusCode).toBe(201);
    const template = findTemplate('startup')!;
    const res = await send('POST', '/setup/company', { company_name: 'Acme', template_name: 'startup' });
    expect(res.statusCode).toBe(201);
    const data = res.json<{ data: { template_applied: string; agent_count: number; department_count: number; agents: { agent_index: number; role: string }[] } }>().data;
    expect(data.template_applied).toBe('startup');
    expect(data.agent_count).toBe(template.agents.length);
    expect(data.department_count).toBe(template.departments.length);
    expect(data.agents.map((a) => a.agent_index)).toEqual(template.agents.map((_, i) => i));
    expect(data.agents.map((a) => a.role)).toEqual(template.agents.map((a) => a.role));
    const listed = await roster();
    expect(listed).toEqual(data.agents);
    expect(listed.some((a) => a.name === 'Manual Person')).toBe(false);
  });

  it('a second template replaces the first one\'s roster', async () => {
    expect((await send('POST', '/setup/company', { company_name: 'Acme', template_name: 'startup' })).statusCode).toBe(201);
    const res = await send('POST', '/setup/company', { company_name: 'Acme', template_name: 'solo_founder' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.agent_count).toBe(findTemplate('solo_founder')!.agents.length);
    expect(await roster()).toHaveLength(findTemplate('solo_founder')!.agents.length);
  });

  it('without a template while agents exist is 409/4000 and changes nothing', async () => {
    expect((await send('POST', '/setup/company', { company_name: 'Acme', template_name: 'startup' })).statusCode).toBe(201);
    const before = await roster();
    const res = await send('POST', '/setup/company', { company_name: 'Renamed' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail).toMatchObject({ error_code: 4000, error_category: 'conflict' });
    expect(await roster()).toEqual(before);
  });

  it('an unknown template is 400/2000 naming it, and the roster is untouched', async () => {
    const before = await roster();
    const res = await send('POST', '/setup/company', { company_name: 'Acme', template_name: 'unicorn_factory' }, ceo, { accept: 'application/problem+json' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json()).toMatchObject({ status: 400, error_code: 2000, error_category: 'validation' });
    expect(res.json().detail).toContain('unicorn_factory');
    expect(await roster()).toEqual(before);
  });

  it('names template agents from the chosen locales, distinct within the roster', async () => {
    expect((await send('PUT', '/setup/name-locales', { locales: ['is_IS'] })).statusCode).toBe(200);
    const res = await send('POST', '/setup/company', { company_name: 'Acme', template_name: 'full_company' });
    expect(res.statusCode).toBe(201);
    const names = res.json<{ data: { agents: { name: string }[] } }>().data.agents.map((a) => a.name);
    // Icelandic surnames are patronymics: every name drawn from is_IS ends in -son or -dóttir.
    for (const name of names) expect(name).toMatch(/(son|dóttir)( \d+)?$/);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each([
    ['an empty company_name', { company_name: '' }],
    ['a blank company_name', { company_name: '   ' }],
    ['a company_name over 200 characters', { company_name: 'x'.repeat(201) }],
    ['a description over 1000 characters', { company_name: 'Acme', description: 'x'.repeat(1001) }],
    ['an unknown field', { company_name: 'Acme', template_name: 'startup', budget: 5 }],
    ['a missing company_name', { template_name: 'startup' }],
  ])('%s is 400/2001', async (_, body) => {
    const res = await send('POST', '/setup/company', body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
  });

  it('needs a signed-in user (401/1000) who is the CEO (403/1001)', async () => {
    const anonymous = await svc.app.inject({ method: 'POST', url: '/api/v1/setup/company', payload: { company_name: 'Acme' } });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().error_detail.error_code).toBe(1000);
    const forbidden = await send('POST', '/setup/company', { company_name: 'Acme' }, observer);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error_detail.error_code).toBe(1001);
    // Who may call comes before what was sent.
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/setup/company', payload: { bogus: 1 } })).statusCode).toBe(401);
    expect((await send('POST', '/setup/company', { bogus: 1 }, observer)).statusCode).toBe(403);
    const manager = await createUser(svc, { role: 'manager' });
    await expect(manager.caller.setup.createCompany({ company_name: 'Acme' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('concurrent template applications leave exactly one template\'s roster, never a mix', async () => {
    const names = ['agency', 'dev_shop', 'research_lab', 'security_team', 'support_desk'] as const;
    const results = await Promise.all(names.map((template_name) => ceo.caller.setup.createCompany({ company_name: 'Race', template_name })));
    expect(results.every((r) => r.template_applied !== null)).toBe(true);
    const listed = await roster();
    const matching = names.filter((name) => {
      const template = findTemplate(name)!;
      return listed.length === template.agents.length && listed.every((a, i) => a.role === template.agents[i]?.role && a.agent_index === i);
    });
    expect(matching).toHaveLength(1);
  });
});
