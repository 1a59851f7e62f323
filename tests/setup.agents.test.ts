// The roster: POST /setup/agent, GET /setup/agents, and the per-agent edits (randomize-name, model, name, personality).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sender } from './helpers/http.ts';
import type { TestService } from './helpers/service.ts';
import { startWithCeo, startWithCeoAndObserver, type TestUser } from './helpers/users.ts';

const minimal = { name: 'Ada Lovelace', role: 'Backend Engineer', model_provider: 'openai', model_id: 'gpt-5-mini' };
const hopper = {
  name: 'Grace Hopper',
  role: 'Head of Security',
  level: 'director',
  personality_preset: 'security_sentinel',
  model_provider: 'google',
  model_id: 'gemini-2.5-pro',
  department: 'security',
  budget_limit_monthly: 250.5,
} as const;

// The shared database holds a full roster (0 Ada Lovelace, 1 Grace Hopper, 2..99 "Agent i") that the reading
// and editing tests use; adding agents happens on databases of their own, so no test sees another's roster.
let svc: TestService;
let ceo: TestUser;
let observer: TestUser;
beforeAll(async () => {
  ({ svc, ceo, observer } = await startWithCeoAndObserver());
  await ceo.caller.setup.createAgent(minimal);
  await ceo.caller.setup.createAgent(hopper);
  // Ten at a time: a hundred at once could wait longer than the pool's connection timeout on a busy machine.
  for (let next = 2; next < 100; next += 10) {
    const batch = Array.from({ length: Math.min(10, 100 - next) }, (_, i) => next + i);
    await Promise.all(batch.map((i) => ceo.caller.setup.createAgent({ ...minimal, name: `Agent ${String(i)}` })));
  }
});
afterAll(() => svc.close());

const send = sender(() => svc, () => ceo);

/** A service with an empty roster, for a test that adds agents; closed when `work` ends. */
async function withEmptyRoster(work: (own: { svc: TestService; ceo: TestUser; send: ReturnType<typeof sender> }) => Promise<void>): Promise<void> {
  const own = await startWithCeo();
  try {
    await work({ ...own, send: sender(() => own.svc, () => own.ceo) });
  } finally {
    await own.svc.close();
  }
}

function expectError(res: { statusCode: number; json(): { error_detail: { error_code: number; detail: string } } }, status: number, code: number): string {
  expect(res.statusCode).toBe(status);
  expect(res.json().error_detail.error_code).toBe(code);
  return res.json().error_detail.detail;
}

describe('POST /api/v1/setup/agent', () => {
  // The refused adds run against a roster with room of their own, so a full roster is never what refuses them.
  let svc: TestService;
  let ceo: TestUser;
  let observer: TestUser;
  beforeAll(async () => {
    ({ svc, ceo, observer } = await startWithCeoAndObserver());
  });
  afterAll(() => svc.close());
  const send = sender(() => svc, () => ceo);

  it('adds the first agent at index 0 with the documented defaults (201)', async () => {
    await withEmptyRoster(async ({ send }) => {
      const res = await send('POST', '/setup/agent', minimal);
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toEqual({
        agent_index: 0,
        name: 'Ada Lovelace',
        role: 'Backend Engineer',
        department: 'engineering',
        model_provider: 'openai',
        model_id: 'gpt-5-mini',
      });
      const listed = await send('GET', '/setup/agents');
      expect(listed.json().data[0]).toEqual({
        agent_index: 0,
        name: 'Ada Lovelace',
        role: 'Backend Engineer',
        department: 'engineering',
        level: 'mid',
        model_provider: 'openai',
        model_id: 'gpt-5-mini',
        tier: 'medium',
        personality_preset: 'pragmatic_builder',
      });
    });
  });

  it('takes every field and appends at the next index', async () => {
    await withEmptyRoster(async ({ ceo, send }) => {
      expect((await send('POST', '/setup/agent', minimal)).statusCode).toBe(201);
      const res = await send('POST', '/setup/agent', hopper);
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toMatchObject({ agent_index: 1, department: 'security', model_provider: 'google' });
      const summary = (await ceo.caller.setup.listAgents({})).items[1];
      expect(summary).toMatchObject({ level: 'director', personality_preset: 'security_sentinel', tier: 'large' });
    });
  });

  it.each([
    ['personality preset', { personality_preset: 'benevolent_overlord' }, 'benevolent_overlord'],
    ['model provider', { model_provider: 'acme-ai' }, 'acme-ai'],
    ['model of a known provider', { model_id: 'gpt-1' }, 'gpt-1'],
  ])('an unknown %s is 400/2000 naming the value', async (_, override, named) => {
    const detail = expectError(await send('POST', '/setup/agent', { ...minimal, ...override }), 400, 2000);
    expect(detail).toContain(named);
  });

  it.each([
    ['an unknown level', { level: 'overlord' }],
    ['a negative budget', { budget_limit_monthly: -1 }],
    ['a budget over 1e6', { budget_limit_monthly: 1_000_001 }],
    ['a blank name', { name: '  ' }],
    ['a name over 200 characters', { name: 'x'.repeat(201) }],
    ['a role over 100 characters', { role: 'x'.repeat(101) }],
    ['a missing model_id', { model_id: undefined }],
    ['an unknown field', { salary: 1 }],
  ])('%s is 400/2001', async (_, override) => {
    expectError(await send('POST', '/setup/agent', { ...minimal, ...override }), 400, 2001);
  });

  it('is for the CEO only (403/1001); anonymous callers get 401/1000', async () => {
    expectError(await send('POST', '/setup/agent', minimal, observer), 403, 1001);
    const anonymous = await svc.app.inject({ method: 'POST', url: '/api/v1/setup/agent', payload: minimal });
    expectError(anonymous, 401, 1000);
  });

  it('concurrent adds get distinct consecutive indices, and the 101st agent is 409/4000', async () => {
    await withEmptyRoster(async ({ ceo, send }) => {
      // Up to 85 in batches, then the last 15 at once: more at once than the pool has connections (20)
      // would wait for one longer than its connect timeout on a busy machine, which is not what this tests.
      for (let next = 0; next < 85; next += 10) {
        await Promise.all(Array.from({ length: Math.min(10, 85 - next) }, (_, i) => ceo.caller.setup.createAgent({ ...minimal, name: `Early ${String(next + i)}` })));
      }
      const before = (await ceo.caller.setup.listAgents({ limit: 200 })).items.length;
      expect(before).toBe(85);
      const results = await Promise.all(
        Array.from({ length: 100 - before }, (_, i) => ceo.caller.setup.createAgent({ ...minimal, name: `Agent ${String(i)}` })),
      );
      expect(results.map((r) => r.agent_index).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 - before }, (_, i) => before + i));
      const over = await send('POST', '/setup/agent', minimal, ceo, { accept: 'application/problem+json' });
      expect(over.statusCode).toBe(409);
      expect(over.json()).toMatchObject({ status: 409, error_code: 4000, error_category: 'conflict' });
      expect((await ceo.caller.setup.listAgents({ limit: 200 })).items).toHaveLength(100);
    });
  });
});

describe('GET /api/v1/setup/agents', () => {
  it('pages by agent_index with signed cursors', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? '?limit=30' : `?limit=30&cursor=${encodeURIComponent(cursor)}`;
      const res = await send('GET', `/setup/agents${query}`);
      expect(res.statusCode).toBe(200);
      const body = res.json<{ data: { agent_index: number }[]; pagination: { limit: number; next_cursor: string | null; has_more: boolean } }>();
      expect(body.pagination.limit).toBe(30);
      expect(body.pagination.has_more).toBe(body.pagination.next_cursor !== null);
      seen.push(...body.data.map((a) => a.agent_index));
      cursor = body.pagination.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  it('any signed-in user may read it', async () => {
    const res = await send('GET', '/setup/agents?limit=1', undefined, observer);
    expect(res.statusCode).toBe(200);
    expect(res.json().pagination).toMatchObject({ limit: 1, has_more: true });
    expectError(await svc.app.inject({ method: 'GET', url: '/api/v1/setup/agents' }), 401, 1000);
  });

  it('rejects a tampered cursor, a cursor of another list, and a bad limit (400/2001)', async () => {
    const first = (await send('GET', '/setup/agents?limit=1')).json<{ pagination: { next_cursor: string } }>().pagination.next_cursor;
    expectError(await send('GET', `/setup/agents?cursor=${first.slice(0, -2)}xx`), 400, 2001);
    const presetCursor = (await send('GET', '/setup/personality-presets?limit=1')).json<{ pagination: { next_cursor: string } }>().pagination.next_cursor;
    expectError(await send('GET', `/setup/agents?cursor=${presetCursor}`), 400, 2001);
    expectError(await send('GET', '/setup/agents?limit=0'), 400, 2001);
    expectError(await send('GET', '/setup/agents?limit=201'), 400, 2001);
  });
});

describe('agent edits', () => {
  it('POST …/randomize-name (no body) gives a new name that no other agent has (200)', async () => {
    await ceo.caller.setup.setLocales({ locales: ['fi_FI', 'sv_SE'] });
    const before = (await ceo.caller.setup.listAgents({ limit: 200 })).items;
    const res = await send('POST', '/setup/agents/3/randomize-name');
    expect(res.statusCode).toBe(200);
    const updated = res.json<{ data: { name: string } }>().data;
    expect({ ...updated, name: before[3]?.name }).toEqual(before[3]);
    expect(before.map((a) => a.name)).not.toContain(updated.name);
    expect(updated.name.split(' ').length).toBeGreaterThanOrEqual(2);
  });

  it('randomize-name refuses a body field (400/2001)', async () => {
    expectError(await send('POST', '/setup/agents/3/randomize-name', { name: 'Me' }), 400, 2001);
  });

  it('PUT …/model changes the model and the tier (200); unknown ones are 400/2000', async () => {
    const res = await send('PUT', '/setup/agents/0/model', { model_provider: 'local', model_id: 'llama-3.2-3b-instruct' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ agent_index: 0, model_provider: 'local', model_id: 'llama-3.2-3b-instruct', tier: 'small', name: 'Ada Lovelace' });
    expect(expectError(await send('PUT', '/setup/agents/0/model', { model_provider: 'local', model_id: 'gpt-5' }), 400, 2000)).toContain('gpt-5');
    expect(expectError(await send('PUT', '/setup/agents/0/model', { model_provider: 'nobody', model_id: 'gpt-5' }), 400, 2000)).toContain('nobody');
  });

  it('PUT …/name renames (200); a blank name is 400/2001', async () => {
    const res = await send('PUT', '/setup/agents/1/name', { name: 'Rear Admiral Hopper' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ agent_index: 1, name: 'Rear Admiral Hopper', role: 'Head of Security' });
    expectError(await send('PUT', '/setup/agents/1/name', { name: '' }), 400, 2001);
  });

  it('PUT …/personality changes the preset (200); an unknown one is 400/2000 naming it', async () => {
    const res = await send('PUT', '/setup/agents/1/personality', { personality_preset: 'devil_advocate' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ agent_index: 1, personality_preset: 'devil_advocate' });
    expect(expectError(await send('PUT', '/setup/agents/1/personality', { personality_preset: 'grumpy' }), 400, 2000)).toContain('grumpy');
  });

  it.each([
    ['POST', 'randomize-name', undefined],
    ['PUT', 'model', { model_provider: 'openai', model_id: 'gpt-5' }],
    ['PUT', 'name', { name: 'Nobody' }],
    ['PUT', 'personality', { personality_preset: 'eager_learner' }],
  ] as const)('%s …/%s of an index past the roster is 404/3000', async (method, action, body) => {
    for (const index of [100, 5000, 999_999_999_999]) {
      expectError(await send(method, `/setup/agents/${String(index)}/${action}`, body), 404, 3000);
    }
  });

  it.each(['-1', '1.5', 'abc', '99999999999999999999'])('agent_index %s is 400/2001', async (index) => {
    const detail = expectError(await send('PUT', `/setup/agents/${index}/name`, { name: 'X' }), 400, 2001);
    expect(detail).toContain('path.agent_index');
  });

  it('a negative index through tRPC is a BAD_REQUEST', async () => {
    await expect(ceo.caller.setup.updateAgentName({ agent_index: -1, name: 'X' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('edits are for the CEO only (403/1001)', async () => {
    expectError(await send('PUT', '/setup/agents/0/name', { name: 'Mallory' }, observer), 403, 1001);
    expectError(await send('POST', '/setup/agents/0/randomize-name', undefined, observer), 403, 1001);
    expect((await ceo.caller.setup.listAgents({ limit: 1 })).items[0]?.name).toBe('Ada Lovelace');
  });

  it('concurrent renames of one agent all succeed and the last committed one is what the roster shows', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => ceo.caller.setup.updateAgentName({ agent_index: 2, name: `Name ${String(i)}` })));
    const final = (await ceo.caller.setup.listAgents({ limit: 3 })).items[2]?.name;
    expect(results.map((r) => r.name)).toContain(final);
  });
});
