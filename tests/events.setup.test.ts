// CONTRACT §4.8: every setup wizard change writes one `setup` event in its own transaction; data is the REST response.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventType } from '../src/contracts/events.ts';
import { countEvents, eventsUpToNow, listen, TestSocket, type LiveEventBody } from './helpers/events.ts';
import type { TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

// The shared wizard is never completed: completion is one-way, so those tests run on services of their own.
let svc: TestService;
let base: string;
let ceo: TestUser;
let observer: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo());
  base = await listen(svc);
  observer = await createUser(svc, { role: 'observer' });
});
afterAll(() => svc.close());

type Request = { method: 'POST' | 'PUT'; url: string; body?: object; user?: TestUser; headers?: Record<string, string> };

function send(service: TestService, who: TestUser, { method, url, body, headers = {} }: Omit<Request, 'user'>) {
  return service.app.inject({ method, url: `/api/v1${url}`, headers: { ...who.headers, ...headers }, ...(body === undefined ? {} : { payload: body }) });
}

/**
 * An observer's socket on `setup` (and `users`, for the fence of eventsUpToNow), with whatever earlier
 * changes' events were still on their way taken off, so that what it receives next is this test's.
 */
async function watch(service: TestService = svc, serviceBase = base, who: TestUser = observer): Promise<TestSocket> {
  const socket = await TestSocket.open(serviceBase, who);
  expect((await socket.request({ type: 'subscribe', channels: ['setup', 'users'] })).type).toBe('subscribed');
  await eventsUpToNow(service, socket);
  return socket;
}

const agentBody = () => ({ name: `Agent ${randomUUID()}`, role: 'Backend Engineer', model_provider: 'openai', model_id: 'gpt-5-mini' });

/** Adds an agent (its own event is not what the test is about) and returns its index. */
async function addAgent(): Promise<number> {
  const res = await send(svc, ceo, { method: 'POST', url: '/setup/agent', body: agentBody() });
  expect(res.statusCode).toBe(201);
  return res.json<{ data: { agent_index: number } }>().data.agent_index;
}

/**
 * Makes `request` as the CEO, then checks the contract: exactly one `type` event was written, and the
 * observer's socket received it with the response's data, the CEO as actor, on the setup channel.
 */
async function expectOneEvent(type: EventType, request: Request, status: number): Promise<LiveEventBody> {
  const socket = await watch();
  const before = await countEvents(svc, type);
  const res = await send(svc, request.user ?? ceo, request);
  expect(res.statusCode).toBe(status);
  const data = res.json().data;
  const received = (await eventsUpToNow(svc, socket)).filter((e) => e.channel === 'setup');
  expect(received.map((e) => e.type)).toEqual([type]);
  const [event] = received;
  expect(event).toMatchObject({ type, channel: 'setup', actor: ceo.username });
  expect(event?.data).toEqual(data);
  expect(await countEvents(svc, type)).toBe(before + 1);
  socket.close();
  if (!event) throw new Error('unreachable');
  return event;
}

/** Makes each refused request and checks that none wrote an event of any setup type. */
async function expectNoEvent(requests: (Request & { status: number })[]): Promise<void> {
  const types: EventType[] = ['setup.company_created', 'setup.agent_created', 'setup.agent_updated', 'setup.locales_updated', 'setup.completed'];
  const counts = async () => Promise.all(types.map((t) => countEvents(svc, t)));
  const socket = await watch();
  const before = await counts();
  for (const request of requests) {
    const res = await send(svc, request.user ?? ceo, request);
    expect(res.statusCode, `${request.method} ${request.url}`).toBe(request.status);
  }
  expect(await counts()).toEqual(before);
  expect((await eventsUpToNow(svc, socket)).filter((e) => e.channel === 'setup')).toEqual([]);
  socket.close();
}

describe('POST /setup/company → setup.company_created', () => {
  it('with a template: data is the 201 body (the company and the whole new roster)', async () => {
    const event = await expectOneEvent('setup.company_created', { method: 'POST', url: '/setup/company', body: { company_name: `Acme ${randomUUID()}`, template_name: 'startup' } }, 201);
    expect(event.data).toMatchObject({ template_applied: 'startup' });
    expect((event.data.agents as unknown[]).length).toBeGreaterThan(0);
  });

  it('refused (unknown template 400, no template while agents exist 409, not the CEO 403): no event', async () => {
    await addAgent();
    await expectNoEvent([
      { method: 'POST', url: '/setup/company', body: { company_name: 'Nope', template_name: 'no_such_template' }, status: 400 },
      { method: 'POST', url: '/setup/company', body: { company_name: 'Nope' }, status: 409 },
      { method: 'POST', url: '/setup/company', body: { company_name: 'Nope', template_name: 'startup' }, user: observer, status: 403 },
    ]);
  });
});

describe('POST /setup/agent → setup.agent_created', () => {
  it('data is the 201 SetupAgentResponse', async () => {
    await expectOneEvent('setup.agent_created', { method: 'POST', url: '/setup/agent', body: agentBody() }, 201);
  });

  it('an idempotent replay (same Idempotency-Key and body) answers again but writes no second event', async () => {
    const key = randomUUID();
    const body = agentBody();
    const request: Request = { method: 'POST', url: '/setup/agent', body, headers: { 'idempotency-key': key } };
    const first = await expectOneEvent('setup.agent_created', request, 201);
    const socket = await watch();
    const before = await countEvents(svc, 'setup.agent_created');
    const replay = await send(svc, ceo, request);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().data).toEqual(first.data);
    expect(await countEvents(svc, 'setup.agent_created')).toBe(before);
    expect((await eventsUpToNow(svc, socket)).filter((e) => e.channel === 'setup')).toEqual([]);
    socket.close();
  });

  it('refused (unknown preset or model 400, not the CEO 403): no event', async () => {
    await expectNoEvent([
      { method: 'POST', url: '/setup/agent', body: { ...agentBody(), personality_preset: 'no_such_preset' }, status: 400 },
      { method: 'POST', url: '/setup/agent', body: { ...agentBody(), model_id: 'no-such-model' }, status: 400 },
      { method: 'POST', url: '/setup/agent', body: agentBody(), user: observer, status: 403 },
    ]);
  });
});

describe('agent edits → setup.agent_updated with the 200 SetupAgentSummary', () => {
  it('PUT /setup/agents/{i}/name', async () => {
    const index = await addAgent();
    const event = await expectOneEvent('setup.agent_updated', { method: 'PUT', url: `/setup/agents/${String(index)}/name`, body: { name: `Renamed ${randomUUID()}` } }, 200);
    expect(event.data.agent_index).toBe(index);
  });

  it('PUT /setup/agents/{i}/model', async () => {
    const index = await addAgent();
    const event = await expectOneEvent('setup.agent_updated', { method: 'PUT', url: `/setup/agents/${String(index)}/model`, body: { model_provider: 'google', model_id: 'gemini-2.5-pro' } }, 200);
    expect(event.data).toMatchObject({ agent_index: index, model_provider: 'google', model_id: 'gemini-2.5-pro' });
  });

  it('PUT /setup/agents/{i}/personality', async () => {
    const index = await addAgent();
    const event = await expectOneEvent('setup.agent_updated', { method: 'PUT', url: `/setup/agents/${String(index)}/personality`, body: { personality_preset: 'security_sentinel' } }, 200);
    expect(event.data).toMatchObject({ agent_index: index, personality_preset: 'security_sentinel' });
  });

  it('POST /setup/agents/{i}/randomize-name', async () => {
    const index = await addAgent();
    const event = await expectOneEvent('setup.agent_updated', { method: 'POST', url: `/setup/agents/${String(index)}/randomize-name` }, 200);
    expect(event.data.agent_index).toBe(index);
  });

  it('refused (no such agent 404, unknown model or preset 400, not the CEO 403): no event', async () => {
    const index = String(await addAgent());
    await expectNoEvent([
      { method: 'PUT', url: '/setup/agents/99/name', body: { name: 'Ghost' }, status: 404 },
      { method: 'POST', url: '/setup/agents/99/randomize-name', status: 404 },
      { method: 'PUT', url: `/setup/agents/${index}/model`, body: { model_provider: 'openai', model_id: 'no-such-model' }, status: 400 },
      { method: 'PUT', url: `/setup/agents/${index}/personality`, body: { personality_preset: 'no_such_preset' }, status: 400 },
      { method: 'PUT', url: `/setup/agents/${index}/name`, body: { name: 'Not yours' }, user: observer, status: 403 },
    ]);
  });
});

describe('PUT /setup/name-locales → setup.locales_updated', () => {
  it('data is the 200 body {locales}', async () => {
    const locales = ['de_DE', 'pt_BR', 'en_US'].slice(0, 1 + Math.floor(Math.random() * 3));
    const event = await expectOneEvent('setup.locales_updated', { method: 'PUT', url: '/setup/name-locales', body: { locales } }, 200);
    expect(event.data).toEqual({ locales });
  });

  it('refused (unknown or repeated codes 400, not the CEO 403): no event', async () => {
    await expectNoEvent([
      { method: 'PUT', url: '/setup/name-locales', body: { locales: ['xx_XX'] }, status: 400 },
      { method: 'PUT', url: '/setup/name-locales', body: { locales: ['de_DE', 'de_DE'] }, status: 400 },
      { method: 'PUT', url: '/setup/name-locales', body: { locales: ['de_DE'] }, user: observer, status: 403 },
    ]);
  });
});

describe('POST /setup/complete → setup.completed', () => {
  /** A wizard of its own (completion is one-way), with its own socket. */
  async function ownWizard(work: (own: { svc: TestService; ceo: TestUser; socket: TestSocket }) => Promise<void>): Promise<void> {
    const own = await startWithCeo();
    try {
      const socket = await watch(own.svc, await listen(own.svc), own.ceo);
      await work({ ...own, socket });
      socket.close();
    } finally {
      await own.svc.close();
    }
  }

  it('data is the 201 body {setup_complete, completed_at}; every later mutation (409) writes none', async () => {
    await ownWizard(async ({ svc: own, ceo: chief, socket }) => {
      expect((await send(own, chief, { method: 'POST', url: '/setup/company', body: { company_name: 'Done Inc' } })).statusCode).toBe(201);
      const res = await send(own, chief, { method: 'POST', url: '/setup/complete' });
      expect(res.statusCode).toBe(201);
      const refused: Omit<Request, 'user'>[] = [
        { method: 'POST', url: '/setup/complete' },
        { method: 'POST', url: '/setup/company', body: { company_name: 'Again' } },
        { method: 'POST', url: '/setup/agent', body: agentBody() },
        { method: 'PUT', url: '/setup/name-locales', body: { locales: ['de_DE'] } },
      ];
      for (const request of refused) expect((await send(own, chief, request)).statusCode, request.url).toBe(409);
      const setupEvents = (await eventsUpToNow(own, socket)).filter((e) => e.channel === 'setup');
      expect(setupEvents.map((e) => e.type)).toEqual(['setup.company_created', 'setup.completed']);
      const completed = setupEvents[1];
      expect(completed).toMatchObject({ type: 'setup.completed', channel: 'setup', actor: chief.username });
      expect(completed?.data).toEqual(res.json().data);
      expect(completed?.occurred_at).toBe(res.json().data.completed_at);
      expect(await countEvents(own, 'setup.completed')).toBe(1);
    });
  });

  it('refused without a company (400): no event', async () => {
    await ownWizard(async ({ svc: own, ceo: chief, socket }) => {
      expect((await send(own, chief, { method: 'POST', url: '/setup/complete' })).statusCode).toBe(400);
      expect(await eventsUpToNow(own, socket)).toEqual([]);
      expect(await countEvents(own, 'setup.completed')).toBe(0);
    });
  });
});
