// Order of checks (CONTRACT §2.2, §3.3): who may call comes before what was sent, on every transport; logout never looks at its input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let doc: OpenApiDocument;
let ceo: TestUser;
let observer: TestUser;
beforeAll(async () => {
  // Limits off: the file sends many refused requests from one IP on purpose.
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  ceo = await createUser(svc, { role: 'ceo' });
  observer = await createUser(svc, { role: 'observer' });
});
afterAll(() => svc.close());

const FORMATS = [
  { name: 'envelope', accept: 'application/json' },
  { name: 'problem+json', accept: 'application/problem+json' },
] as const;

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Sent = { method: Method; url: string; payload?: string; contentType?: string; headers?: Record<string, string> };

/** Sends the request in both error formats; each answer has the status and code, and conforms to the document. */
async function expectError(req: Sent, status: number, code: number): Promise<void> {
  for (const format of FORMATS) {
    const headers: Record<string, string> = { accept: format.accept, ...req.headers };
    if (req.contentType) headers['content-type'] = req.contentType;
    const res = await svc.app.inject({ method: req.method, url: req.url, headers, ...(req.payload === undefined ? {} : { payload: req.payload }) });
    const label = `${req.method} ${req.url} ${req.payload ?? ''} (${format.name})`;
    expect(res.statusCode, `${label}: ${res.body}`).toBe(status);
    expectResponseConforms(doc, req.method, req.url, res);
    const problem = format.accept === 'application/problem+json' ? res.json() : res.json().error_detail;
    expect(problem.error_code, label).toBe(code);
  }
}

const json = 'application/json';

/** A POST to /api/trpc/<procedure> with a raw body; answers the status and the ProblemDetail of the tRPC error. */
async function trpcPost(procedure: string, payload: string, headers: Record<string, string> = {}) {
  const res = await svc.app.inject({ method: 'POST', url: `/api/trpc/${procedure}`, headers: { 'content-type': json, ...headers }, payload });
  return { status: res.statusCode, problem: res.statusCode >= 400 ? res.json().error.data.problem : undefined };
}

describe('authentication comes before input validation', () => {
  it('an anonymous POST /setup/complete with an unknown field is 401, not 400', async () => {
    await expectError({ method: 'POST', url: '/api/v1/setup/complete', payload: '{"bogus":1}', contentType: json }, 401, 1000);
  });

  it.each([
    ['malformed JSON', '{"company_name": ', json],
    ['a body that is not an object', '[1, 2]', json],
    ['a null body', 'null', json],
    ['an unsupported media type', 'company_name=x', 'application/x-www-form-urlencoded'],
    ['text the database cannot store', '{"company_name":"a\\u0000b"}', json],
  ])('an anonymous POST /setup/company with %s is 401', async (_name, payload, contentType) => {
    await expectError({ method: 'POST', url: '/api/v1/setup/company', payload, contentType }, 401, 1000);
  });

  it('an anonymous GET with a repeated query parameter is 401', async () => {
    await expectError({ method: 'GET', url: '/api/v1/approvals?limit=1&limit=2' }, 401, 1000);
  });

  it('an anonymous request with a bad path parameter is 401', async () => {
    await expectError({ method: 'GET', url: `/api/v1/users/${'x'.repeat(129)}` }, 401, 1000);
  });

  it('through /api/trpc: an anonymous setup.complete or setup.createCompany with a bad body is 401', async () => {
    expect(await trpcPost('setup.complete', '{"bogus":1}')).toMatchObject({ status: 401, problem: { error_code: 1000 } });
    expect(await trpcPost('setup.createCompany', '{"bogus":1}')).toMatchObject({ status: 401, problem: { error_code: 1000 } });
    expect(await trpcPost('setup.createCompany', '{"company_name":"a\\u0000"}')).toMatchObject({ status: 401, problem: { error_code: 1000 } });
  });
});

describe('authorization comes before input validation', () => {
  it.each([
    ['an unknown field to a procedure without input', '/api/v1/setup/complete', '{"bogus":1}', json],
    ['an unknown field', '/api/v1/setup/company', '{"bogus":1}', json],
    ['malformed JSON', '/api/v1/users', '{"username": ', json],
    ['a null body', '/api/v1/users', 'null', json],
    ['an unsupported media type', '/api/v1/users', 'username=x', 'text/plain'],
    ['text the database cannot store', '/api/v1/users', '{"username":"\\ud800","password":"long enough password","role":"manager"}', json],
  ])('a wrong-role user sending %s gets 403', async (_name, url, payload, contentType) => {
    await expectError({ method: 'POST', url, payload, contentType, headers: observer.headers }, 403, 1001);
  });

  it('through /api/trpc: a wrong-role setup.complete with a bad body is 403', async () => {
    expect(await trpcPost('setup.complete', '{"bogus":1}', observer.headers)).toMatchObject({ status: 403, problem: { error_code: 1001 } });
  });

  it('the right role still gets 400/2001 for the same bad body', async () => {
    await expectError({ method: 'POST', url: '/api/v1/setup/complete', payload: '{"bogus":1}', contentType: json, headers: ceo.headers }, 400, 2001);
    await expectError({ method: 'POST', url: '/api/v1/users', payload: '{"username": ', contentType: json, headers: ceo.headers }, 400, 2001);
  });
});

describe('POST /auth/logout never validates a body or query (CONTRACT §3.3)', () => {
  const meCode = async (user: TestUser) => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { ...user.headers, ...PROBLEM } });
    return res.statusCode === 200 ? 200 : (res.json().error_code as number);
  };

  it.each([
    ['an unknown field', '{"everywhere":true}', json],
    ['malformed JSON', '{"x": ', json],
    ['a null body', 'null', json],
    ['an array', '[1, 2, 3]', json],
    ['a string', '"bye"', json],
    ['text with a NUL', '{"x":"\\u0000"}', json],
    ['a lone surrogate', '{"x":"\\udc00"}', json],
    ['a __proto__ key', '{"__proto__":{"admin":true}}', json],
    ['plain text', 'please log me out', 'text/plain'],
    ['a form', 'a=1&b=2', 'application/x-www-form-urlencoded'],
  ])('with %s: 204 and the session has ended', async (_name, payload, contentType) => {
    const user = await createUser(svc);
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...user.headers, 'content-type': contentType }, payload });
    expect(res.statusCode, res.body).toBe(204);
    expect(await meCode(user)).toBe(1002);
  });

  it('with a junk query string: 204 and the session has ended', async () => {
    const user = await createUser(svc);
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout?scope=all&scope=own&x=%00', headers: user.headers });
    expect(res.statusCode, res.body).toBe(204);
    expect(await meCode(user)).toBe(1002);
  });

  it.each([
    ['an unknown field', '{"everywhere":true}'],
    ['malformed JSON', '{"x": '],
    ['a NUL', '{"x":"\\u0000"}'],
  ])('through /api/trpc with %s: success and the session has ended', async (_name, payload) => {
    const user = await createUser(svc);
    expect((await trpcPost('auth.logout', payload, user.headers)).status).toBe(200);
    expect(await meCode(user)).toBe(1002);
  });
});
