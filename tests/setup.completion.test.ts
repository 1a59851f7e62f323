// POST /setup/complete: its preconditions, the read-only wizard afterwards, and completion racing other mutations.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockState, markComplete } from '../src/services/setup/store.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const dir = mkdtempSync(join(tmpdir(), 'agent-org-setup-'));
const started: TestService[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

function catalogueFile(name: string, providers: unknown[]): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ providers }));
  return file;
}

async function wizard(opts: { providersFile?: string; databaseUrl?: string } = {}): Promise<{ svc: TestService; ceo: TestUser }> {
  const env: Record<string, string> = { RATE_LIMITS_ENABLED: 'false' };
  if (opts.providersFile) env.PROVIDERS_FILE = opts.providersFile;
  const svc = await startTestService({ env, ...(opts.databaseUrl ? { databaseUrl: opts.databaseUrl } : {}) });
  started.push(svc);
  const ceo = opts.databaseUrl ? await signIn(svc) : await createUser(svc, { role: 'ceo' });
  return { svc, ceo };
}

/** A CEO on a database that already has one (at most one may exist): the old one steps down first. */
async function signIn(svc: TestService): Promise<TestUser> {
  const em = svc.deps.orm.em.fork();
  await em.getConnection().execute(`update users set role = 'manager' where role = 'ceo'`);
  return createUser(svc, { role: 'ceo' });
}

const send = (svc: TestService, user: TestUser, method: 'GET' | 'POST' | 'PUT', url: string, body?: object) =>
  svc.app.inject({ method, url: `/api/v1${url}`, headers: user.headers, ...(body === undefined ? {} : { payload: body }) });

const engineer = { name: 'Linus', role: 'Engineer', model_provider: 'openai', model_id: 'gpt-5' };

describe('POST /api/v1/setup/complete preconditions', () => {
  it('without a company is 400/2000', async () => {
    const { svc, ceo } = await wizard();
    await ceo.caller.setup.createAgent(engineer);
    const res = await send(svc, ceo, 'POST', '/setup/complete');
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail).toMatchObject({ error_code: 2000 });
    expect(res.json().error).toMatch(/company/);
    expect((await svc.caller().setup.status()).needs_setup).toBe(true);
  });

  it('with an empty provider catalogue: has_providers false, no agent or template can be added, completion is 400/2000', async () => {
    const { svc, ceo } = await wizard({ providersFile: catalogueFile('empty.json', []) });
    expect(await svc.caller().setup.status()).toMatchObject({ has_providers: false });
    const agent = await send(svc, ceo, 'POST', '/setup/agent', engineer);
    expect(agent.statusCode).toBe(400);
    expect(agent.json().error_detail.error_code).toBe(2000);
    const template = await send(svc, ceo, 'POST', '/setup/company', { company_name: 'Acme', template_name: 'startup' });
    expect(template.statusCode).toBe(400);
    expect(template.json().error_detail.error_code).toBe(2000);
    expect((await send(svc, ceo, 'POST', '/setup/company', { company_name: 'Acme' })).statusCode).toBe(201);
    const res = await send(svc, ceo, 'POST', '/setup/complete');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/provider/);
  });

  it("is 400/2000 while an agent's model is no longer offered, and succeeds once it is changed", async () => {
    const first = await wizard();
    await first.ceo.caller.setup.createCompany({ company_name: 'Acme' });
    await first.ceo.caller.setup.createAgent(engineer);
    await first.ceo.caller.setup.createAgent({ ...engineer, name: 'Ken', model_provider: 'anthropic', model_id: 'claude-haiku-4-5' });
    // The operator restarts with a catalogue that dropped gpt-5.
    const smaller = catalogueFile('smaller.json', [
      { name: 'anthropic', display_name: 'Anthropic', models: [{ id: 'claude-haiku-4-5', display_name: 'Haiku', tier: 'small' }] },
    ]);
    const { svc, ceo } = await wizard({ providersFile: smaller, databaseUrl: first.svc.databaseUrl });
    const res = await send(svc, ceo, 'POST', '/setup/complete');
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail.error_code).toBe(2000);
    expect(res.json().error).toContain('agent 0 (openai/gpt-5)');
    expect(res.json().error).not.toContain('agent 1');
    // The roster still reads with the tier the model had when it was assigned.
    expect((await ceo.caller.setup.listAgents({})).items[0]).toMatchObject({ model_id: 'gpt-5', tier: 'large' });
    await ceo.caller.setup.updateAgentModel({ agent_index: 0, model_provider: 'anthropic', model_id: 'claude-haiku-4-5' });
    const done = await send(svc, ceo, 'POST', '/setup/complete');
    expect(done.statusCode).toBe(201);
  });

  it('is for the CEO only (403/1001)', async () => {
    const { svc } = await wizard();
    const manager = await createUser(svc, { role: 'manager' });
    await expect(manager.caller.setup.complete()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const res = await send(svc, manager, 'POST', '/setup/complete');
    expect(res.statusCode).toBe(403);
  });
});

describe('after completion', () => {
  it('answers 201 {setup_complete, completed_at} once; status reports needs_setup false', async () => {
    const at = new Date('2026-11-21T10:00:00.000Z');
    const svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' }, clock: { now: () => at } });
    started.push(svc);
    const ceo = await createUser(svc, { role: 'ceo' });
    await ceo.caller.setup.createCompany({ company_name: 'Acme', template_name: 'solo_founder' });
    const res = await send(svc, ceo, 'POST', '/setup/complete');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ data: { setup_complete: true, completed_at: '2026-11-21T10:00:00.000Z' }, error: null, error_detail: null, success: true });
    expect(await svc.caller().setup.status()).toMatchObject({ needs_setup: false, has_company: true, has_agents: true });

    const mutations: [string, 'POST' | 'PUT', string, object | undefined][] = [
      ['complete again', 'POST', '/setup/complete', undefined],
      ['company', 'POST', '/setup/company', { company_name: 'Acme', template_name: 'startup' }],
      ['company without template', 'POST', '/setup/company', { company_name: 'Other' }],
      ['agent', 'POST', '/setup/agent', engineer],
      ['randomize-name', 'POST', '/setup/agents/0/randomize-name', undefined],
      ['model', 'PUT', '/setup/agents/0/model', { model_provider: 'openai', model_id: 'gpt-5' }],
      ['name', 'PUT', '/setup/agents/0/name', { name: 'Someone' }],
      ['personality', 'PUT', '/setup/agents/0/personality', { personality_preset: 'eager_learner' }],
      ['name-locales', 'PUT', '/setup/name-locales', { locales: ['en_US'] }],
      // Even a mutation that would otherwise fail validation or find nothing: the wizard is closed.
      ['an unknown template', 'POST', '/setup/company', { company_name: 'Acme', template_name: 'nope' }],
      ['a missing agent', 'PUT', '/setup/agents/99/name', { name: 'Nobody' }],
    ];
    const before = await ceo.caller.setup.listAgents({});
    for (const [what, method, url, body] of mutations) {
      const r = await send(svc, ceo, method, url, body);
      expect(r.statusCode, what).toBe(409);
      expect(r.json().error_detail, what).toMatchObject({ error_code: 4000, error_category: 'conflict' });
    }
    expect(await ceo.caller.setup.listAgents({})).toEqual(before);
    expect((await send(svc, ceo, 'GET', '/setup/name-locales')).json().data).toEqual({ locales: ['__all__'] });
    // Reads keep working.
    expect((await send(svc, ceo, 'GET', '/setup/templates')).statusCode).toBe(200);
  });
});

describe('completion races', () => {
  it('of N concurrent completions exactly one wins; the rest get 409/4000', async () => {
    const { svc, ceo } = await wizard();
    await ceo.caller.setup.createCompany({ company_name: 'Acme' });
    const results = await Promise.all(Array.from({ length: 8 }, () => send(svc, ceo, 'POST', '/setup/complete')));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json().error_detail.error_code).toBe(4000);
  });

  it('agents added while completing are either in the completed roster or refused with 409, never lost', async () => {
    for (let round = 0; round < 3; round++) {
      const { svc, ceo } = await wizard();
      await ceo.caller.setup.createCompany({ company_name: 'Acme' });
      const adds = Array.from({ length: 12 }, (_, i) => send(svc, ceo, 'POST', '/setup/agent', { ...engineer, name: `Racer ${String(i)}` }));
      // Completion fires in the middle of the adds.
      const all = await Promise.all([...adds.slice(0, 6), send(svc, ceo, 'POST', '/setup/complete'), ...adds.slice(6)]);
      const complete = all[6];
      expect(complete?.statusCode).toBe(201);
      const addResults = all.filter((_, i) => i !== 6);
      const added = addResults.filter((r) => r.statusCode === 201).map((r) => r.json<{ data: { name: string } }>().data.name);
      for (const r of addResults.filter((x) => x.statusCode !== 201)) {
        expect(r.statusCode).toBe(409);
        expect(r.json().error_detail.error_code).toBe(4000);
      }
      const roster = (await ceo.caller.setup.listAgents({ limit: 200 })).items.map((a) => a.name);
      expect(roster.sort()).toEqual(added.sort());
    }
  });

  it('a mutation that arrives while a completion holds the wizard lock waits for it, then gets 409/4000', async () => {
    const { svc, ceo } = await wizard();
    await ceo.caller.setup.createCompany({ company_name: 'Acme' });
    let settled = false;
    let add: Promise<{ statusCode: number; json(): { error_detail: { error_code: number } } }> | undefined;
    // A completion caught between taking the lock and committing: the add must neither slip in nor be lost.
    await svc.deps.orm.em.fork().transactional(async (tx) => {
      await lockState(tx);
      await markComplete(tx, new Date());
      add = send(svc, ceo, 'POST', '/setup/agent', engineer);
      void add.then(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false);
    });
    const res = await add;
    expect(res?.statusCode).toBe(409);
    expect(res?.json().error_detail.error_code).toBe(4000);
    expect((await ceo.caller.setup.listAgents({})).items).toHaveLength(0);
  });

  it('a template applied while completing either lands whole before completion or is refused', async () => {
    const { svc, ceo } = await wizard();
    await ceo.caller.setup.createCompany({ company_name: 'Acme' });
    const [company, complete] = await Promise.all([
      send(svc, ceo, 'POST', '/setup/company', { company_name: 'Acme', template_name: 'full_company' }),
      send(svc, ceo, 'POST', '/setup/complete'),
    ]);
    expect(complete.statusCode).toBe(201);
    const roster = (await ceo.caller.setup.listAgents({ limit: 200 })).items;
    if (company.statusCode === 201) expect(roster).toHaveLength(company.json<{ data: { agent_count: number } }>().data.agent_count);
    else {
      expect(company.statusCode).toBe(409);
      expect(roster).toHaveLength(0);
    }
  });
});
