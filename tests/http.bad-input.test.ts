import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../src/services/pagination.ts';
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let doc: OpenApiDocument;
let ceo: TestUser;
beforeAll(async () => {
  // Limits off: this file sends many requests from one subject on purpose.
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const FORMATS = [
  { name: 'envelope', accept: 'application/json' },
  { name: 'problem+json', accept: 'application/problem+json' },
] as const;

/**
 * Sends the request in both formats and checks each answer: the status, the error code, the documented
 * schema, and that the detail names what was wrong. Returns the problem detail text.
 */
async function expectError(
  req: { method: Method; url: string; payload?: string; contentType?: string; auth?: boolean },
  status: number,
  code: number,
  detail?: RegExp,
): Promise<void> {
  for (const format of FORMATS) {
    const headers: Record<string, string> = { accept: format.accept };
    if (req.contentType) headers['content-type'] = req.contentType;
    if (req.auth) Object.assign(headers, ceo.headers);
    const res = await svc.app.inject({ method: req.method, url: req.url, headers, ...(req.payload === undefined ? {} : { payload: req.payload }) });
    const label = `${req.method} ${req.url} (${format.name})`;
    expect(res.statusCode, `${label}: ${res.body}`).toBe(status);
    expectResponseConforms(doc, req.method, req.url, res);
    const problem = format.accept === 'application/problem+json' ? res.json() : res.json().error_detail;
    expect(problem.error_code, label).toBe(code);
    if (detail) expect(problem.detail, label).toMatch(detail);
  }
}

const login = (payload: string, contentType = 'application/json') => ({ method: 'POST' as const, url: '/api/v1/auth/login', payload, contentType });

describe('request bodies', () => {
  it('malformed JSON → 400/2001', async () => {
    await expectError(login('{"username": "a", '), 400, 2001, /malformed JSON/);
  });

  it.each([['[1, 2]'], ['"a string"'], ['42'], ['true']])('a non-object body %s → 400/2001', async (payload) => {
    await expectError(login(payload), 400, 2001, /must be a JSON object/);
  });

  it('an oversized body (> 1 MiB) → 400/2001, never 413', async () => {
    await expectError(login(JSON.stringify({ username: 'a', password: 'x'.repeat(1024 * 1024) })), 400, 2001, /too large/);
  });

  it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['multipart/form-data; boundary=x']])('content type %s → 400/2001, never 415', async (type) => {
    await expectError(login('username=a&password=b', type), 400, 2001, /content type/);
  });

  it('an unknown field → 400/2001 naming it', async () => {
    await expectError(login(JSON.stringify({ username: 'someone', password: 'long enough password', is_admin: true })), 400, 2001, /is_admin/);
  });

  it('a missing field → 400/2001 naming it', async () => {
    await expectError(login(JSON.stringify({ username: 'someone' })), 400, 2001, /body\.password/);
  });

  it('a body may not smuggle a path parameter → 400/2001', async () => {
    await expectError(
      { method: 'PATCH', url: `/api/v1/users/${ceo.id}`, payload: JSON.stringify({ role: 'manager', user_id: 'someone-else' }), contentType: 'application/json', auth: true },
      400,
      2001,
      /user_id/,
    );
  });
});

describe('path parameters', () => {
  it('129 characters → 400/2001 naming the parameter', async () => {
    await expectError({ method: 'GET', url: `/api/v1/users/${'a'.repeat(129)}`, auth: true }, 400, 2001, /path\.user_id/);
  });

  it('128 characters are accepted (a well-formed id of nothing → 404/3000)', async () => {
    await expectError({ method: 'GET', url: `/api/v1/users/${'a'.repeat(128)}`, auth: true }, 404, 3000);
  });
});

describe('list queries: limit', () => {
  it.each([['0'], ['201'], ['abc'], ['1.5'], ['1e2'], ['-1'], ['+5'], [' 5']])('limit=%s → 400/2001 naming query.limit', async (limit) => {
    await expectError({ method: 'GET', url: `/api/v1/users?limit=${encodeURIComponent(limit)}`, auth: true }, 400, 2001, /query\.limit/);
  });

  it('limit given twice → 400/2001', async () => {
    await expectError({ method: 'GET', url: '/api/v1/users?limit=1&limit=2', auth: true }, 400, 2001, /query\.limit/);
  });

  it.each([['1'], ['200'], ['']])('limit=%s is accepted (empty means the default)', async (limit) => {
    const res = await svc.app.inject({ method: 'GET', url: `/api/v1/users?limit=${limit}`, headers: ceo.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().pagination.limit).toBe(limit === '' ? 50 : Number(limit));
    expectResponseConforms(doc, 'GET', '/api/v1/users', res);
  });
});

describe('list queries: cursor', () => {
  it.each([['garbage'], ['a.b'], ['.'], ['eyJsIjoidXNlcnMiLCJwIjpbIngiXX0.forged-signature']])('a tampered cursor %s → 400/2001', async (cursor) => {
    await expectError({ method: 'GET', url: `/api/v1/users?cursor=${encodeURIComponent(cursor)}`, auth: true }, 400, 2001, /cursor/);
  });

  it('a correctly signed cursor of another list → 400/2001', async () => {
    const foreign = encodeCursor(svc.deps.secret, 'some-other-list', ['2026-01-01T00:00:00.000Z', 'x']);
    await expectError({ method: 'GET', url: `/api/v1/users?cursor=${foreign}`, auth: true }, 400, 2001, /cursor/);
  });

  it('a cursor over 512 characters → 400/2001', async () => {
    await expectError({ method: 'GET', url: `/api/v1/users?cursor=${'a'.repeat(513)}`, auth: true }, 400, 2001, /query\.cursor/);
  });

  it('a cursor signed with another secret → 400/2001', async () => {
    const other = encodeCursor(Buffer.alloc(32, 7), 'users', ['2026-01-01T00:00:00.000Z', 'x']);
    await expectError({ method: 'GET', url: `/api/v1/users?cursor=${other}`, auth: true }, 400, 2001, /cursor/);
  });
});

describe('routes and methods', () => {
  it('an unknown path → 404/3002', async () => {
    await expectError({ method: 'GET', url: '/api/v1/definitely/not/here' }, 404, 3002);
  });

  it('an unknown path with a body-carrying method → 404/3002', async () => {
    await expectError({ method: 'POST', url: '/api/v1/nothing', payload: '{}', contentType: 'application/json' }, 404, 3002);
  });

  it('a wrong method on a known path → 405/2001 with Allow', async () => {
    await expectError({ method: 'PUT', url: '/api/v1/users' }, 405, 2001, /not allowed/);
    const res = await svc.app.inject({ method: 'PUT', url: '/api/v1/users' });
    expect(res.headers.allow).toBe('GET, POST, HEAD');
  });
});
