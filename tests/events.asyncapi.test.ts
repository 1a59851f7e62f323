// GET /api/v1/asyncapi.json: a valid AsyncAPI 3.0 document whose payload schemas match the frames the socket really sends.
import specs from '@asyncapi/specs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventType } from '../src/contracts/events.ts';
import { recordEvent } from '../src/events/record.ts';
import { approvalData, listen, TestSocket, type Frame } from './helpers/events.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let base: string;
let user: TestUser;
type AsyncApiDocument = {
  components: { messages: Record<string, { payload: { $ref: string } }>; schemas: Record<string, unknown> };
  operations: { events: { messages: unknown[] } };
  channels: { events: { address: string } };
};
let doc: AsyncApiDocument;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  base = await listen(svc);
  user = await createUser(svc);
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/asyncapi.json' })).json();
});
afterAll(() => svc.close());

/** A validator for one message's payload, resolving the document's `#/components/schemas/…` references. */
function payloadValidator(message: string): ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components }, 'doc');
  const ref = doc.components.messages[message]?.payload.$ref ?? '';
  return ajv.compile({ $ref: `doc${ref}` });
}

function expectValid(message: string, frame: unknown): void {
  const validate = payloadValidator(message);
  expect(validate(frame), `${message}: ${JSON.stringify(validate.errors)}`).toBe(true);
}

const now = () => new Date().toISOString();
const USER_ID = '0b6a7a5e-2f4c-4c1e-9d3a-5f0e8b7c6d21';
const user0 = { id: USER_ID, username: 'alice', role: 'manager' as const, kind: 'human' as const, must_change_password: false, mfa_enabled: false, org_roles: [], scoped_departments: [], created_at: now(), updated_at: now() };
const agent = { agent_index: 0, name: 'Ada', role: 'engineer', department: 'engineering', level: 'mid' as const, model_provider: 'p', model_id: 'm', tier: 'medium' as const, personality_preset: 'pragmatic_builder' };

async function recordSample(type: EventType, audience: string): Promise<void> {
  await svc.deps.orm.em.fork().transactional(async (tx) => {
    switch (type) {
      case 'approval.created':
      case 'approval.approved':
      case 'approval.rejected':
      case 'approval.expired':
        return recordEvent(tx, { type, actor: 'alice', data: approvalData() });
      case 'review.stage_decided':
        return recordEvent(tx, { type, actor: 'alice', data: { task_id: 't', stage_name: 's', verdict: 'fail', reason: 'no', decided_by: 'alice', decided_at: now() } });
      case 'user.created':
      case 'user.updated':
        return recordEvent(tx, { type, actor: 'chief', data: user0 });
      case 'user.deleted':
        return recordEvent(tx, { type, actor: 'chief', data: { id: USER_ID, username: 'alice' } });
      case 'setup.company_created':
        return recordEvent(tx, { type, actor: 'chief', data: { company_name: 'Acme', description: null, template_applied: null, department_count: 1, agents: [agent], agent_count: 1 } });
      case 'setup.agent_created':
        return recordEvent(tx, { type, actor: 'chief', data: { agent_index: 0, name: 'Ada', role: 'engineer', department: 'engineering', model_provider: 'p', model_id: 'm' } });
      case 'setup.agent_updated':
        return recordEvent(tx, { type, actor: 'chief', data: agent });
      case 'setup.locales_updated':
        return recordEvent(tx, { type, actor: 'chief', data: { locales: ['en_US'] } });
      case 'setup.completed':
        return recordEvent(tx, { type, actor: 'chief', data: { setup_complete: true, completed_at: now() } });
      case 'session.revoked':
        return recordEvent(tx, { type, actor: null, audience, data: { session_id: 'another-session', reason: 'password_changed' } });
    }
  });
}

describe('GET /api/v1/asyncapi.json', () => {
  it('is a valid AsyncAPI 3.0.0 document (the official JSON Schema of @asyncapi/specs)', () => {
    // The specification bundles the draft-07 meta-schema itself, so Ajv must not add its own copy.
    const ajv = new Ajv({ strict: false, allErrors: true, meta: false, validateSchema: false });
    addFormats.default(ajv);
    const validate = ajv.compile(specs.schemas['3.0.0']);
    expect(validate(doc), JSON.stringify(validate.errors, null, 1)).toBe(true);
    expect(validate({ ...doc, info: { title: 'no version' } })).toBe(false);
    expect(doc).toMatchObject({ asyncapi: '3.0.0', info: { version: '0.9.0' }, servers: { 'agent-org': { host: 'agent-org.test', protocol: 'ws', pathname: '/api/v1' } } });
    expect(doc.channels.events.address).toBe('/ws');
  });

  it('describes every client frame, every server frame and one message per event type of the catalogue', () => {
    expect(Object.keys(doc.components.messages).sort()).toEqual(['error', 'ping', 'pong', 'subscribe', 'subscribed', 'unsubscribe', ...EVENT_TYPES].sort());
    expect(doc.operations.events.messages).toHaveLength(EVENT_TYPES.length);
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['ApprovalResponse', 'UserResponse', 'StageDecisionResponse', 'ProblemDetail']));
  });

  it('the frames a socket receives for every event type match their message payloads', async () => {
    const socket = await TestSocket.open(base, user);
    expect(await socket.request({ type: 'subscribe', channels: ['approvals', 'reviews', 'users', 'setup', 'sessions'] })).toMatchObject({ type: 'subscribed' });
    for (const type of EVENT_TYPES) {
      await recordSample(type, user.id);
      const frame: Frame = await socket.next();
      expect(frame.event?.type).toBe(type);
      expectValid(type, frame);
      // A payload of another type does not validate: the schemas say something.
      expectValid('pong', { type: 'pong' });
      expect(payloadValidator(type)({ type: 'event', event: { ...frame.event, type: 'something.else' } })).toBe(false);
    }
    expectValid('subscribed', await socket.request({ type: 'unsubscribe', channels: ['setup'] }));
    expectValid('pong', await socket.request({ type: 'ping' }));
    expectValid('error', await socket.request({ type: 'subscribe', channels: ['nope'] }));
    socket.close();
  });

  it('the client frames the server accepts validate, and ones it refuses do not', () => {
    expectValid('subscribe', { type: 'subscribe', channels: ['users'], since: '42' });
    expectValid('unsubscribe', { type: 'unsubscribe', channels: ['users'] });
    expectValid('ping', { type: 'ping' });
    expect(payloadValidator('subscribe')({ type: 'subscribe', channels: ['payroll'] })).toBe(false);
    expect(payloadValidator('subscribe')({ type: 'subscribe', channels: ['users'], since: 'yesterday' })).toBe(false);
  });

  it('is listed where the API is documented: the OpenAPI description the /docs page shows links it', async () => {
    const openapi = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(openapi.info.description).toContain('http://agent-org.test/api/v1/asyncapi.json');
  });
});

describe('GET /api/v1/capabilities', () => {
  it('reports events: true, the WebSocket being served', async () => {
    expect(await user.caller.probes.capabilities()).toMatchObject({ events: true });
  });
});
