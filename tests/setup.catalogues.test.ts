// The wizard's read-mostly endpoints: status, templates, name locales (available, chosen, PUT rules) and personality presets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERSONALITY_PRESETS } from '../src/data/personalityPresets.ts';
import { routeTable } from '../src/rest/routeTable.ts';
import { sender } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';
import { ALL_NAME_LOCALES, TEMPLATE_NAMES } from '../src/contracts/catalogue.ts';

let svc: TestService;
let ceo: TestUser;
let observer: TestUser;
let statusBeforeAdmin: unknown;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  statusBeforeAdmin = (await svc.app.inject({ method: 'GET', url: '/api/v1/setup/status' })).json();
  ceo = await createUser(svc, { role: 'ceo' });
  observer = await createUser(svc, { role: 'observer' });
});
afterAll(() => svc.close());

const send = sender(() => svc, () => ceo);

describe('GET /api/v1/setup/status', () => {
  it('is public and reports a fresh deployment: no admin, nothing chosen, providers configured', () => {
    expect(statusBeforeAdmin).toEqual({
      data: {
        needs_admin: true,
        needs_setup: true,
        has_providers: true,
        has_name_locales: false,
        has_company: false,
        has_agents: false,
        min_password_length: 12,
      },
      error: null,
      error_detail: null,
      success: true,
    });
  });

  it('needs_admin turns false once a CEO exists', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/setup/status' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.needs_admin).toBe(false);
    expect(await svc.caller().setup.status()).toMatchObject({ needs_admin: false, needs_setup: true });
  });

  it('is public in the OpenAPI sense too, and carries no rate-limit operation', () => {
    const route = routeTable.find((r) => r.procedurePath === 'setup.status');
    expect(route?.meta.access).toMatchObject({ tier: 'unlimited', authenticated: false, limited: false });
    expect(route?.meta.limits).toBeUndefined();
  });
});

describe('rate-limit operations', () => {
  it('company, agent and complete declare setup.company, setup.agent and setup.complete', () => {
    const ops = Object.fromEntries(routeTable.filter((r) => r.procedurePath.startsWith('setup.')).map((r) => [r.procedurePath, r.meta.limits?.op]));
    expect(ops).toMatchObject({ 'setup.createCompany': 'setup.company', 'setup.createAgent': 'setup.agent', 'setup.complete': 'setup.complete' });
  });
});

describe('GET /api/v1/setup/templates', () => {
  it('returns the 12 builtin templates as a plain array (no pagination)', async () => {
    const res = await send('GET', '/setup/templates', undefined, observer);
    expect(res.statusCode).toBe(200);
    const body = res.json<{ data: { name: string; source: string; autonomy_level: string; agent_count: number }[] }>();
    expect(body).not.toHaveProperty('pagination');
    expect(body.data.map((t) => t.name)).toEqual([...TEMPLATE_NAMES]);
    for (const template of body.data) {
      expect(Object.keys(template).sort()).toEqual([
        'agent_count', 'autonomy_level', 'department_count', 'description', 'display_name', 'name', 'source', 'tags', 'workflow',
      ]);
      expect(template.source).toBe('builtin');
      expect(['full', 'semi', 'supervised', 'locked']).toContain(template.autonomy_level);
      expect(template.agent_count).toBeGreaterThan(0);
    }
  });

  it('needs a signed-in user (401/1000)', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/setup/templates', headers: { accept: 'application/problem+json' } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
  });
});

describe('GET /api/v1/setup/name-locales/available', () => {
  it('lists the 57 codes in 11 regions with a display name each', async () => {
    const res = await send('GET', '/setup/name-locales/available', undefined, observer);
    expect(res.statusCode).toBe(200);
    const { regions, display_names } = res.json<{ data: { regions: Record<string, string[]>; display_names: Record<string, string> } }>().data;
    expect(Object.keys(regions)).toHaveLength(11);
    const codes = Object.values(regions).flat();
    expect(codes.sort()).toEqual([...ALL_NAME_LOCALES].sort());
    expect(Object.keys(display_names).sort()).toEqual([...ALL_NAME_LOCALES].sort());
    for (const code of ['en_US', 'de_DE', 'pt_BR', 'sw', 'zu_ZA']) expect(codes).toContain(code);
  });
});

describe('GET and PUT /api/v1/setup/name-locales', () => {
  it('reports ["__all__"] while nothing was chosen', async () => {
    // A database of its own: the other tests here choose locales.
    const fresh = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
    try {
      const reader = await createUser(fresh, { role: 'observer' });
      const res = await fresh.app.inject({ method: 'GET', url: '/api/v1/setup/name-locales', headers: reader.headers });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ locales: ['__all__'] });
    } finally {
      await fresh.close();
    }
  });

  it('PUT stores the chosen codes (200) and status reports has_name_locales', async () => {
    const res = await send('PUT', '/setup/name-locales', { locales: ['de_DE', 'sw', 'pt_BR'] });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ locales: ['de_DE', 'sw', 'pt_BR'] });
    expect((await send('GET', '/setup/name-locales')).json().data).toEqual({ locales: ['de_DE', 'sw', 'pt_BR'] });
    expect((await send('GET', '/setup/status')).json().data.has_name_locales).toBe(true);
  });

  it('PUT ["__all__"] is an explicit choice of every locale', async () => {
    expect((await send('PUT', '/setup/name-locales', { locales: ['__all__'] })).statusCode).toBe(200);
    expect((await send('GET', '/setup/name-locales')).json().data).toEqual({ locales: ['__all__'] });
    expect((await send('GET', '/setup/status')).json().data.has_name_locales).toBe(true);
  });

  it('accepts all 57 codes at once', async () => {
    const res = await send('PUT', '/setup/name-locales', { locales: [...ALL_NAME_LOCALES] });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.locales).toHaveLength(57);
  });

  it.each([
    ['an unknown code', ['en_US', 'xx_XX'], 'xx_XX'],
    ['a duplicate code', ['en_US', 'en_US'], 'en_US'],
    ['__all__ mixed with codes', ['__all__', 'en_US'], '__all__'],
    ['an empty list', [], 'at least one'],
    ['more than 100 codes', Array.from({ length: 101 }, () => 'en_US'), 'at most 100'],
  ])('%s is 400/2000 and keeps the previous choice', async (_, locales, named) => {
    const before = (await send('GET', '/setup/name-locales')).json().data;
    const res = await send('PUT', '/setup/name-locales', { locales });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail).toMatchObject({ error_code: 2000, error_category: 'validation' });
    expect(res.json().error).toContain(named);
    expect((await send('GET', '/setup/name-locales')).json().data).toEqual(before);
  });

  it.each([
    ['a string instead of a list', { locales: 'en_US' }],
    ['a list of numbers', { locales: [1, 2] }],
    ['an unknown field', { locales: ['en_US'], region: 'Africa' }],
  ])('%s is 400/2001', async (_, body) => {
    const res = await send('PUT', '/setup/name-locales', body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail.error_code).toBe(2001);
  });

  it('PUT is for the CEO only (403/1001)', async () => {
    const res = await send('PUT', '/setup/name-locales', { locales: ['en_US'] }, observer);
    expect(res.statusCode).toBe(403);
    expect(res.json().error_detail.error_code).toBe(1001);
  });
});

describe('GET /api/v1/setup/personality-presets', () => {
  it('lists the 23 presets sorted by name, {name, description} each, in one default page', async () => {
    const res = await send('GET', '/setup/personality-presets', undefined, observer);
    expect(res.statusCode).toBe(200);
    const body = res.json<{ data: { name: string }[]; pagination: unknown }>();
    expect(body.pagination).toEqual({ limit: 50, next_cursor: null, has_more: false });
    expect(body.data).toEqual(PERSONALITY_PRESETS.map((p) => ({ name: p.name, description: p.description })));
    const names = body.data.map((p) => p.name);
    expect(names).toHaveLength(23);
    expect([...names].sort()).toEqual(names);
  });

  it('pages through with cursors without gaps or repeats', async () => {
    const names: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await ceo.caller.setup.personalityPresets({ limit: 5, cursor });
      names.push(...page.items.map((p) => p.name));
      cursor = page.pagination.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(5);
    expect(names).toEqual(PERSONALITY_PRESETS.map((p) => p.name));
  });

  it('rejects a cursor of another list and a tampered one (400/2001)', async () => {
    await ceo.caller.setup.createAgent({ name: 'A', role: 'R', model_provider: 'openai', model_id: 'gpt-5' });
    await ceo.caller.setup.createAgent({ name: 'B', role: 'R', model_provider: 'openai', model_id: 'gpt-5' });
    const agentsCursor = (await ceo.caller.setup.listAgents({ limit: 1 })).pagination.next_cursor;
    expect(agentsCursor).not.toBeNull();
    for (const cursor of [agentsCursor ?? '', 'garbage', 'eyJsIjoic2V0dXAucGVyc29uYWxpdHlfcHJlc2V0cyIsInAiOlsiYSJdfQ.bad']) {
      const res = await send('GET', `/setup/personality-presets?cursor=${encodeURIComponent(cursor)}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error_detail.error_code).toBe(2001);
    }
  });
});
