import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';
import { expectConforms, expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';

let svc: TestService;
let doc: OpenApiDocument;
beforeAll(async () => {
  // Limits off: the sweep below sends every operation twice from one anonymous address.
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(() => svc.close());

const PROBLEM = { accept: 'application/problem+json' };

async function record(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string> = {}) {
  const res = await svc.app.inject({ method, url, headers });
  expectResponseConforms(doc, method, url, res);
  return res;
}

describe('probes answer what the document promises', () => {
  it('GET /healthz 200', async () => {
    expect((await record('GET', '/api/v1/healthz')).statusCode).toBe(200);
  });

  it('GET /readyz 200', async () => {
    expect((await record('GET', '/api/v1/readyz')).statusCode).toBe(200);
  });

  it('GET /capabilities 200 for a signed-in user', async () => {
    const user = await createUser(svc);
    expect((await record('GET', '/api/v1/capabilities', user.headers)).statusCode).toBe(200);
  });

  it('GET /capabilities 401 in the envelope', async () => {
    const res = await record('GET', '/api/v1/capabilities');
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('GET /capabilities 401 as a bare ProblemDetail', async () => {
    const res = await record('GET', '/api/v1/capabilities', PROBLEM);
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toBe('application/problem+json');
  });
});

describe('route-level errors match the shared error schemas', () => {
  it('404/3002 for an unknown path, both formats', async () => {
    for (const headers of [{}, PROBLEM]) {
      const res = await record('GET', '/api/v1/no/such/thing', headers);
      expect(res.statusCode).toBe(404);
    }
  });

  it('405 for a wrong method on a known path, both formats', async () => {
    for (const headers of [{}, PROBLEM]) {
      const res = await record('DELETE', '/api/v1/healthz', headers);
      expect(res.statusCode).toBe(405);
    }
  });
});

describe('every operation', () => {
  it('answers an anonymous request with an empty JSON object with a documented status and body, in both formats', async () => {
    const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const method of methods) {
        if (!(method in item)) continue;
        const url = `/api/v1${path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'agent_index' ? '0' : 'x'))}`;
        for (const accept of ['application/json', 'application/problem+json']) {
          const upper = method.toUpperCase() as Uppercase<typeof method>;
          const res = await svc.app.inject({ method: upper, url, headers: { accept, 'content-type': 'application/json' }, payload: upper === 'GET' ? undefined : '{}' });
          expect(res.statusCode, `${upper} ${url}`).toBeLessThan(500);
          expectResponseConforms(doc, upper, url, res);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});

describe('the conformance check itself', () => {
  const ok = { data: { status: 'ok', version: '0.9.0', uptime_seconds: 1 }, error: null, error_detail: null, success: true };

  it('accepts a body that matches', () => {
    expect(() => expectConforms(doc, 'GET', '/api/v1/healthz', 200, ok, 'application/json; charset=utf-8')).not.toThrow();
  });

  it('rejects a body with a wrong, missing or extra field', () => {
    const bad = [
      { ...ok, data: { status: 'nope', version: '0.9.0', uptime_seconds: 1 } },
      { ...ok, data: { status: 'ok', version: '0.9.0' } },
      { ...ok, data: { status: 'ok', uptime_seconds: 1 } },
      { ...ok, data: { status: 'ok', version: '0.9.0', uptime_seconds: 1, extra: true } },
      { ...ok, success: false },
    ];
    for (const body of bad) expect(() => expectConforms(doc, 'GET', '/api/v1/healthz', 200, body, 'application/json')).toThrow(/does not match/);
  });

  it('rejects an undocumented status, media type or operation', () => {
    expect(() => expectConforms(doc, 'GET', '/api/v1/healthz', 201, ok, 'application/json')).toThrow(/not documented/);
    expect(() => expectConforms(doc, 'GET', '/api/v1/healthz', 200, ok, 'text/html')).toThrow(/not documented/);
    expect(() => expectConforms(doc, 'GET', '/api/v1/nope', 200, ok, 'application/json')).toThrow(/no documented operation/);
  });

  it('rejects an error body in the wrong format for its media type', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities' });
    expect(() => expectConforms(doc, 'GET', '/api/v1/capabilities', 401, res.json(), 'application/problem+json')).toThrow(/does not match/);
  });
});
