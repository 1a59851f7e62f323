// A whole wizard run as a client sees it: once through @trpc/client over real HTTP, once through the REST facade.
import { createTRPCClient, httpBatchLink, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../src/routers/index.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

/** A service listening on a real port, with a signed-in CEO and the tRPC endpoint's URL. */
async function listening(): Promise<{ svc: TestService; ceo: TestUser; url: string }> {
  const svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  await svc.app.listen({ port: 0, host: '127.0.0.1' });
  const address = svc.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the app is not listening on TCP');
  return { svc, ceo: await createUser(svc, { role: 'ceo' }), url: `http://127.0.0.1:${String(address.port)}/api/trpc` };
}

describe('the wizard through @trpc/client at /api/trpc', () => {
  let svc: TestService;
  let ceo: TestUser;
  let url: string;
  beforeAll(async () => {
    ({ svc, ceo, url } = await listening());
  });
  afterAll(() => svc.close());

  it('runs from status to completion', async () => {
    const anonymous = createTRPCClient<AppRouter>({ links: [httpLink({ url })] });
    const client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url, headers: { authorization: ceo.headers.authorization } })] });

    expect(await anonymous.setup.status.query()).toMatchObject({ needs_admin: false, needs_setup: true, has_company: false, min_password_length: 12 });

    const [templates, available, presets] = await Promise.all([
      client.setup.templates.query(),
      client.setup.availableLocales.query(),
      client.setup.personalityPresets.query({ limit: 3 }),
    ]);
    expect(templates).toHaveLength(12);
    expect(Object.keys(available.regions)).toHaveLength(11);
    expect(presets.items).toHaveLength(3);
    expect(presets.pagination.has_more).toBe(true);

    expect(await client.setup.getLocales.query()).toEqual({ locales: ['__all__'] });
    expect(await client.setup.setLocales.mutate({ locales: ['ga_IE', 'en_IE'] })).toEqual({ locales: ['ga_IE', 'en_IE'] });

    const company = await client.setup.createCompany.mutate({ company_name: 'Emerald Labs', description: 'Research on a budget', template_name: 'research_lab' });
    expect(company).toMatchObject({ company_name: 'Emerald Labs', template_applied: 'research_lab', agent_count: 7 });

    const added = await client.setup.createAgent.mutate({
      name: 'Mary Robinson',
      role: 'Grant Writer',
      department: 'research',
      personality_preset: 'technical_communicator',
      model_provider: 'anthropic',
      model_id: 'claude-haiku-4-5',
    });
    expect(added).toEqual({ agent_index: 7, name: 'Mary Robinson', role: 'Grant Writer', department: 'research', model_provider: 'anthropic', model_id: 'claude-haiku-4-5' });

    const renamed = await client.setup.randomizeAgentName.mutate({ agent_index: 0 });
    expect(renamed.name).not.toBe(company.agents[0]?.name);
    expect(await client.setup.updateAgentName.mutate({ agent_index: 1, name: 'Siobhán Kelly' })).toMatchObject({ name: 'Siobhán Kelly' });
    expect(await client.setup.updateAgentModel.mutate({ agent_index: 2, model_provider: 'google', model_id: 'gemini-2.5-flash' })).toMatchObject({ tier: 'medium' });
    expect(await client.setup.updateAgentPersonality.mutate({ agent_index: 3, personality_preset: 'quality_guardian' })).toMatchObject({
      personality_preset: 'quality_guardian',
    });

    const page = await client.setup.listAgents.query({ limit: 5 });
    expect(page.items.map((a) => a.agent_index)).toEqual([0, 1, 2, 3, 4]);
    const rest = await client.setup.listAgents.query({ cursor: page.pagination.next_cursor });
    expect(rest.items.map((a) => a.agent_index)).toEqual([5, 6, 7]);
    expect(rest.pagination).toEqual({ limit: 50, next_cursor: null, has_more: false });

    const done = await client.setup.complete.mutate();
    expect(done.setup_complete).toBe(true);
    expect(Number.isNaN(Date.parse(done.completed_at))).toBe(false);
    expect(await anonymous.setup.status.query()).toMatchObject({ needs_setup: false, has_company: true, has_agents: true, has_name_locales: true });
  });

  it('errors carry the ProblemDetail in error.data.problem', async () => {
    // A service of its own whose wizard is already complete, so adding an agent is a conflict.
    const done = await listening();
    try {
      await done.ceo.caller.setup.setLocales({ locales: ['ga_IE'] });
      await done.ceo.caller.setup.createCompany({ company_name: 'Emerald Labs', template_name: 'solo_founder' });
      await done.ceo.caller.setup.complete();
      const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: done.url, headers: { authorization: done.ceo.headers.authorization } })] });
      const error: unknown = await client.setup.createAgent
        .mutate({ name: 'Late', role: 'R', model_provider: 'openai', model_id: 'gpt-5' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TRPCClientError);
      expect(error).toMatchObject({ data: { httpStatus: 409, problem: { status: 409, error_code: 4000, error_category: 'conflict' } } });
      const unauthenticated = createTRPCClient<AppRouter>({ links: [httpLink({ url: done.url })] });
      await expect(unauthenticated.setup.listAgents.query({})).rejects.toMatchObject({ data: { problem: { error_code: 1000 } } });
    } finally {
      await done.svc.close();
    }
  });
});

describe('the wizard through the REST facade at /api/v1', () => {
  let svc: TestService;
  let ceo: TestUser;
  beforeAll(async () => {
    ({ svc, ceo } = await startWithCeo());
  });
  afterAll(() => svc.close());

  const send = async <T = Record<string, unknown>>(method: 'GET' | 'POST' | 'PUT', url: string, body?: object, expected = 200) => {
    const res = await svc.app.inject({ method, url: `/api/v1${url}`, headers: ceo.headers, ...(body === undefined ? {} : { payload: body }) });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(expected);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const json = res.json<{ data: T; pagination?: unknown }>();
    expect(json).toMatchObject({ error: null, error_detail: null, success: true });
    return json;
  };

  it('runs from status to completion with the documented statuses', async () => {
    const status = await svc.app.inject({ method: 'GET', url: '/api/v1/setup/status' });
    expect(status.statusCode).toBe(200);
    expect(status.json().data).toMatchObject({ needs_admin: false, needs_setup: true });

    expect((await send<unknown[]>('GET', '/setup/templates')).data).toHaveLength(12);
    expect((await send<{ display_names: Record<string, string> }>('GET', '/setup/name-locales/available')).data.display_names.sw).toBe('Swahili');
    expect((await send<unknown[]>('GET', '/setup/personality-presets?limit=50')).data).toHaveLength(23);
    expect((await send('PUT', '/setup/name-locales', { locales: ['pt_BR'] })).data).toEqual({ locales: ['pt_BR'] });

    const company = (await send('POST', '/setup/company', { company_name: 'Fazenda', template_name: 'solo_founder' }, 201)).data;
    expect(company).toMatchObject({ template_applied: 'solo_founder', agent_count: 2, department_count: 2 });

    const agent = (await send<{ agent_index: number }>('POST', '/setup/agent', { name: 'João Silva', role: 'Designer', model_provider: 'local', model_id: 'qwen3-14b' }, 201)).data;
    expect(agent.agent_index).toBe(2);

    await send('POST', '/setup/agents/2/randomize-name');
    await send('PUT', '/setup/agents/2/name', { name: 'Ana Souza' });
    await send('PUT', '/setup/agents/2/model', { model_provider: 'openai', model_id: 'gpt-5-nano' });
    const edited = (await send('PUT', '/setup/agents/2/personality', { personality_preset: 'creative_innovator' })).data;
    expect(edited).toEqual({
      agent_index: 2,
      name: 'Ana Souza',
      role: 'Designer',
      department: 'engineering',
      level: 'mid',
      model_provider: 'openai',
      model_id: 'gpt-5-nano',
      tier: 'small',
      personality_preset: 'creative_innovator',
    });

    const list = await send<unknown[]>('GET', '/setup/agents');
    expect(list.data).toHaveLength(3);
    expect(list.pagination).toEqual({ limit: 50, next_cursor: null, has_more: false });

    const done = await send('POST', '/setup/complete', undefined, 201);
    expect(done.data).toEqual({ setup_complete: true, completed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });

    const again = await svc.app.inject({ method: 'POST', url: '/api/v1/setup/complete', headers: { ...ceo.headers, accept: 'application/problem+json' } });
    expect(again.statusCode).toBe(409);
    expect(again.headers['content-type']).toBe('application/problem+json');
    expect(again.json()).toMatchObject({ status: 409, error_code: 4000, error_category: 'conflict', retryable: false, retry_after: null });
  });
});
