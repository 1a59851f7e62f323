// Input the database cannot store or that would reach an object's prototype is a shape error (400/2001) on every transport (CONTRACT §2.2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Approval } from '../src/db/entities/Approval.ts';
import { StageDecision } from '../src/db/entities/StageDecision.ts';
import { toApiError } from '../src/errors.ts';
import { routeTable } from '../src/rest/routeTable.ts';
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let doc: OpenApiDocument;
let ceo: TestUser;
let writer: TestUser;
beforeAll(async () => {
  // Limits off: the file sends many requests as one user on purpose.
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  ceo = await createUser(svc, { role: 'ceo' });
  writer = await createUser(svc, { role: 'manager' });
});
afterAll(() => svc.close());

const FORMATS = [
  { name: 'envelope', accept: 'application/json' },
  { name: 'problem+json', accept: 'application/problem+json' },
] as const;

type Method = 'GET' | 'POST' | 'DELETE';

/** The request in both error formats: 400/2001, documented, with a detail matching `detail`. */
async function expect2001(user: TestUser, method: Method, url: string, payload: string | undefined, detail: RegExp): Promise<void> {
  for (const format of FORMATS) {
    const headers: Record<string, string> = { accept: format.accept, ...user.headers };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const res = await svc.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
    const label = `${method} ${url} ${payload ?? ''} (${format.name})`;
    expect(res.statusCode, `${label}: ${res.body}`).toBe(400);
    expectResponseConforms(doc, method, url, res);
    const problem = format.accept === 'application/problem+json' ? res.json() : res.json().error_detail;
    expect(problem.error_code, label).toBe(2001);
    expect(problem.detail, label).toMatch(detail);
  }
}

const approvalCount = () => svc.deps.orm.em.fork().count(Approval);
const decisionCount = () => svc.deps.orm.em.fork().count(StageDecision);

const VALID = { action_type: 'deploy:production', title: 'Ship it', description: 'Release 2.0', risk_level: 'medium' };
/** JSON text of a valid approval request with `fields` spliced in as raw JSON (so `\u0000` escapes reach the parser as such). */
const approvalBody = (fields: string) => `${JSON.stringify(VALID).slice(0, -1)},${fields}}`;

describe('a NUL character or a lone surrogate is refused with 400/2001 naming the field, and nothing is stored', () => {
  it.each([
    ['a NUL in the title', '"title":"Ship\\u0000it"', /^body\.title: .*NUL/],
    ['a lone high surrogate in the title', '"title":"Ship \\ud800"', /^body\.title: .*lone surrogate/],
    ['a lone low surrogate in the description', '"description":"\\udc00 release"', /^body\.description: .*lone surrogate/],
    ['a NUL in the task_id', '"task_id":"t\\u0000"', /^body\.task_id: .*NUL/],
    ['a lone surrogate in the task_id', '"task_id":"t\\udbff"', /^body\.task_id: .*lone surrogate/],
    ['a NUL in a metadata value', '"metadata":{"env":"prod\\u0000"}', /^body\.metadata\.env: .*NUL/],
    ['a lone surrogate in a metadata value', '"metadata":{"env":"\\ud800"}', /^body\.metadata\.env: .*lone surrogate/],
    ['a NUL in a metadata key', '"metadata":{"e\\u0000nv":"prod"}', /^body\.metadata: .*key.*NUL/],
    ['a lone surrogate in a metadata key', '"metadata":{"\\udfff":"prod"}', /^body\.metadata: .*key.*lone surrogate/],
  ])('POST /approvals with %s', async (_name, fields, detail) => {
    const before = await approvalCount();
    await expect2001(writer, 'POST', '/api/v1/approvals', approvalBody(fields), detail);
    expect(await approvalCount()).toBe(before);
  });

  it('a surrogate pair (an emoji) is ordinary text and is stored as sent', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/approvals', headers: { ...writer.headers, 'content-type': 'application/json' }, payload: approvalBody('"title":"Ship \\ud83d\\ude80"') });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.title).toBe('Ship 🚀');
  });

  it('a NUL in the action_type query → 400 naming query.action_type', async () => {
    await expect2001(writer, 'GET', '/api/v1/approvals?action_type=deploy%00:prod', undefined, /^query\.action_type: .*NUL/);
  });

  it('a NUL in the session_id path parameter → 400 naming path.session_id', async () => {
    await expect2001(writer, 'DELETE', '/api/v1/auth/sessions/abc%00def', undefined, /^path\.session_id: .*NUL/);
  });

  it('a NUL in the task_id path parameter (decide and list) → 400 naming path.task_id, nothing stored', async () => {
    const before = await decisionCount();
    await expect2001(writer, 'POST', '/api/v1/reviews/task%00x/stages/code_review/decide', '{"verdict":"pass","reason":null}', /^path\.task_id: .*NUL/);
    await expect2001(writer, 'GET', '/api/v1/reviews/task%00x/stages', undefined, /^path\.task_id: .*NUL/);
    expect(await decisionCount()).toBe(before);
  });

  it('a lone surrogate in a stage decision reason → 400 naming body.reason, nothing stored', async () => {
    const before = await decisionCount();
    await expect2001(writer, 'POST', '/api/v1/reviews/task-1/stages/code_review/decide', '{"verdict":"fail","reason":"bad \\ud800"}', /^body\.reason: .*lone surrogate/);
    expect(await decisionCount()).toBe(before);
  });

  it('through /api/trpc: the same rule, naming the field', async () => {
    const before = await approvalCount();
    const post = await svc.app.inject({ method: 'POST', url: '/api/trpc/approvals.create', headers: { ...writer.headers, 'content-type': 'application/json' }, payload: approvalBody('"metadata":{"env":"\\ud800"}') });
    expect(post.statusCode, post.body).toBe(400);
    expect(post.json().error.data.problem).toMatchObject({ status: 400, error_code: 2001, detail: expect.stringMatching(/^metadata\.env: .*lone surrogate/) });
    const input = encodeURIComponent(JSON.stringify({ action_type: 'deploy\u0000:prod' }));
    const get = await svc.app.inject({ method: 'GET', url: `/api/trpc/approvals.list?input=${input}`, headers: writer.headers });
    expect(get.statusCode, get.body).toBe(400);
    expect(get.json().error.data.problem).toMatchObject({ error_code: 2001, detail: expect.stringMatching(/^action_type: .*NUL/) });
    expect(await approvalCount()).toBe(before);
  });

  it('through createCaller: the same rule, naming the field', async () => {
    const before = await approvalCount();
    const created = await writer.caller.approvals.create({ ...VALID, risk_level: 'low', title: 'a\u0000b' }).catch((error: unknown) => toApiError(error));
    expect(created).toMatchObject({ status: 400, errorCode: 2001, detail: expect.stringMatching(/^title: .*NUL/) });
    const decided = await writer.caller.reviews.decideStage({ task_id: 't\uD800', stage_name: 'code_review', verdict: 'pass', reason: null }).catch((error: unknown) => toApiError(error));
    expect(decided).toMatchObject({ status: 400, errorCode: 2001, detail: expect.stringMatching(/^task_id: .*lone surrogate/) });
    expect(await approvalCount()).toBe(before);
  });

  it('REST: a body that is not valid UTF-8 is refused (400/2001), never stored with U+FFFD', async () => {
    const before = await approvalCount();
    const bytes = Buffer.concat([Buffer.from(approvalBody('"title":"Ship ').slice(0, -1)), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    for (const format of FORMATS) {
      const res = await svc.app.inject({ method: 'POST', url: '/api/v1/approvals', headers: { ...writer.headers, accept: format.accept, 'content-type': 'application/json' }, payload: bytes });
      expect(res.statusCode, res.body).toBe(400);
      expectResponseConforms(doc, 'POST', '/api/v1/approvals', res);
      const problem = format.accept === 'application/problem+json' ? res.json() : res.json().error_detail;
      expect(problem).toMatchObject({ error_code: 2001, detail: 'body: not valid UTF-8' });
    }
    expect(await approvalCount()).toBe(before);
  });

  it('tRPC: a body that is not valid UTF-8 is refused (400/2001) after authentication, never stored with U+FFFD', async () => {
    const before = await approvalCount();
    const bytes = Buffer.concat([Buffer.from(approvalBody('"title":"Ship ').slice(0, -1)), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const anonymous = await svc.app.inject({ method: 'POST', url: '/api/trpc/approvals.create', headers: { 'content-type': 'application/json' }, payload: bytes });
    expect(anonymous.statusCode).toBe(401);
    const res = await svc.app.inject({ method: 'POST', url: '/api/trpc/approvals.create', headers: { ...writer.headers, 'content-type': 'application/json' }, payload: bytes });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error.data.problem).toMatchObject({ error_code: 2001, detail: 'body: not valid UTF-8' });
    expect(await approvalCount()).toBe(before);
    // The same body, valid, still goes through: the bytes reach tRPC unchanged.
    const valid = await svc.app.inject({ method: 'POST', url: '/api/trpc/approvals.create', headers: { ...writer.headers, 'content-type': 'application/json' }, payload: approvalBody('"title":"Ship é"') });
    expect(valid.statusCode, valid.body).toBe(200);
    expect(valid.json().result.data.title).toBe('Ship é');
  });

  it('tRPC: a body over the limit is still refused by the body limit, not buffered whole', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/api/trpc/approvals.create', headers: { ...writer.headers, 'content-type': 'application/json' }, payload: `{"x":"${'a'.repeat(2 * 1024 * 1024)}"}` });
    // CONTRACT §2.2: an oversized body is a shape error like any other.
    expect(res.statusCode).toBe(400);
    // Refused by Fastify's body limit before tRPC runs, so in the service's own error shape.
    expect(res.json().error_detail).toMatchObject({ error_code: 2001, detail: expect.stringMatching(/too large|limit/i) });
  });

  it('a deeply nested body is refused as a shape error, never a 500', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    await expect2001(writer, 'POST', '/api/v1/approvals', approvalBody(`"metadata":${deep}`), /^body\.metadata/);
  });
});

/** Every query parameter of every GET operation, with its route's URL filled (the value of a path parameter does not matter here). */
const QUERY_PARAMETERS = routeTable
  .filter((route) => route.method === 'GET' && route.inputShape !== null)
  .flatMap((route) =>
    Object.keys(route.inputShape ?? {})
      .filter((name) => !route.pathParams.includes(name))
      .map((name) => ({ name, url: `/api/v1${route.openapiPath.replace(/\{(\w+)\}/g, (_, param: string) => (param === 'agent_index' ? '0' : 'x'))}` })),
  );

describe('a query value that is not percent-encoded UTF-8 is refused with 400/2001 naming the parameter, never read as other text', () => {
  it('the parameters below include every list query (the table is not empty)', () => {
    const names = QUERY_PARAMETERS.map(({ url, name }) => `${url}?${name}`);
    expect(names).toEqual(expect.arrayContaining(['/api/v1/approvals?action_type', '/api/v1/approvals?cursor', '/api/v1/approvals?limit', '/api/v1/users?cursor', '/api/v1/auth/sessions?scope']));
  });

  it.each(['%ED%A0%80', '%FF', '%', 'ok%E2%82'])('%s in any query parameter of any operation → 400/2001 naming query.<parameter>', async (bad) => {
    for (const { name, url } of QUERY_PARAMETERS) {
      await expect2001(ceo, 'GET', `${url}?${name}=${bad}`, undefined, new RegExp(`^query\\.${name}: .*percent-encoding or UTF-8`));
    }
  });

  it('the same parameter percent-encoded correctly is ordinary text (%25FF is the three characters "%FF")', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/approvals?action_type=%25FF', headers: writer.headers });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('authentication comes first: anonymous → 401', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/approvals?action_type=%FF' });
    expect(res.statusCode, res.body).toBe(401);
  });

  it('an unknown query parameter is ignored whatever its encoding, like any other', async () => {
    for (const url of ['/api/v1/approvals?utm_source=%FF', '/api/v1/approvals?%FF=1']) {
      const res = await svc.app.inject({ method: 'GET', url, headers: writer.headers });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    }
  });

  it('through /api/trpc: an undecodable input parameter → 400/2001 naming input, after authentication', async () => {
    const url = `/api/trpc/approvals.list?input=${encodeURIComponent('{"action_type":"')}%ED%A0%80${encodeURIComponent('"}')}`;
    const res = await svc.app.inject({ method: 'GET', url, headers: writer.headers });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error.data.problem).toMatchObject({ error_code: 2001, detail: expect.stringMatching(/^input: .*percent-encoding or UTF-8/) });
    const anonymous = await svc.app.inject({ method: 'GET', url });
    expect(anonymous.statusCode, anonymous.body).toBe(401);
  });
});

describe('prototype keys are refused the same way on every transport', () => {
  it('REST: a __proto__ key carrying a required field is 400/2001, not an approval', async () => {
    const before = await approvalCount();
    const { title: _title, ...withoutTitle } = VALID;
    const payload = `${JSON.stringify(withoutTitle).slice(0, -1)},"__proto__":{"title":"smuggled"}}`;
    await expect2001(writer, 'POST', '/api/v1/approvals', payload, /^body\.__proto__/);
    expect(await approvalCount()).toBe(before);
  });

  it('tRPC: the same body is 400/2001 naming __proto__', async () => {
    const { title: _title, ...withoutTitle } = VALID;
    const payload = `${JSON.stringify(withoutTitle).slice(0, -1)},"__proto__":{"title":"smuggled"}}`;
    const res = await svc.app.inject({ method: 'POST', url: '/api/trpc/approvals.create', headers: { ...writer.headers, 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.data.problem).toMatchObject({ error_code: 2001, detail: expect.stringMatching(/^__proto__/) });
  });

  it.each([
    ['a __proto__ key in metadata', '"metadata":{"__proto__":"x"}', /^body\.metadata\.__proto__/, /^metadata\.__proto__/],
    ['a constructor.prototype in metadata', '"metadata":{"constructor":{"prototype":{"x":"y"}}}', /^body\.metadata\.constructor\.prototype/, /^metadata\.constructor\.prototype/],
  ])('%s: 400/2001 on both transports, nothing stored', async (_name, fields, restDetail, trpcDetail) => {
    const before = await approvalCount();
    await expect2001(writer, 'POST', '/api/v1/approvals', approvalBody(fields), restDetail);
    const res = await svc.app.inject({ method: 'POST', url: '/api/trpc/approvals.create', headers: { ...writer.headers, 'content-type': 'application/json' }, payload: approvalBody(fields) });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.data.problem).toMatchObject({ error_code: 2001, detail: expect.stringMatching(trpcDetail) });
    expect(await approvalCount()).toBe(before);
  });

  it('a plain "constructor" metadata key is ordinary data', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/approvals', headers: { ...writer.headers, 'content-type': 'application/json' }, payload: approvalBody('"metadata":{"constructor":"x"}') });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.metadata).toEqual({ constructor: 'x' });
  });

  it.each([['constructor'], ['__proto__'], ['toString']])('an unknown query parameter named %s is ignored like any other', async (name) => {
    const res = await svc.app.inject({ method: 'GET', url: `/api/v1/approvals?${name}=x`, headers: writer.headers });
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('a null body where the procedure expects an object', () => {
  const approve = (id: string, payload: string | undefined) =>
    svc.app.inject({
      method: 'POST',
      url: `/api/v1/approvals/${id}/approve`,
      headers: { ...ceo.headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload }),
    });

  it('POST /approvals/{id}/approve with body null → 400/2001 and the approval stays pending; an omitted body is fine', async () => {
    const created = await writer.caller.approvals.create({ ...VALID, risk_level: 'low' });
    await expect2001(ceo, 'POST', `/api/v1/approvals/${created.id}/approve`, 'null', /^body: must be a JSON object/);
    expect((await ceo.caller.approvals.get({ approval_id: created.id })).status).toBe('pending');
    const res = await approve(created.id, undefined);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.status).toBe('approved');
  });

  it('an empty JSON body counts as omitted', async () => {
    const created = await writer.caller.approvals.create({ ...VALID, risk_level: 'low' });
    const res = await approve(created.id, '');
    expect(res.statusCode, res.body).toBe(200);
  });
});
