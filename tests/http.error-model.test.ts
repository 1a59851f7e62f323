import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prefersProblemJson } from '../src/rest/negotiate.ts';
import { startTestService, type TestService } from './helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

const PROBLEM_KEYS = ['detail', 'error_category', 'error_code', 'instance', 'retry_after', 'retryable', 'status', 'title', 'type'];

describe('unknown routes', () => {
  it('answer 404/3002 in the envelope by default', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body).toMatchObject({ data: null, success: false, error_detail: { error_code: 3002, error_category: 'not_found', retryable: false, retry_after: null } });
    expect(body.error).toBe(body.error_detail.detail);
    expect(body.error_detail.type).toBe('http://agent-org.test/docs/errors#not_found');
    expect(body.error_detail.title).toBe('Resource Not Found');
    expect(body.error_detail).not.toHaveProperty('status');
  });

  it('answer a bare ProblemDetail when Accept prefers application/problem+json', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/nope', headers: { accept: 'application/problem+json' } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(Object.keys(res.json()).sort()).toEqual(PROBLEM_KEYS);
    expect(res.json()).toMatchObject({ status: 404, error_code: 3002 });
  });
});

describe('wrong method on a known path', () => {
  it('answers 405/2001 with an Allow header', async () => {
    const res = await svc.app.inject({ method: 'DELETE', url: '/api/v1/healthz' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.json().error_detail).toMatchObject({ error_code: 2001, error_category: 'validation' });
  });
});

describe('HEAD', () => {
  it('works wherever GET does', async () => {
    const res = await svc.app.inject({ method: 'HEAD', url: '/api/v1/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
  });
});

describe('request bodies', () => {
  const post = (payload: string, contentType = 'application/json') =>
    svc.app.inject({ method: 'PUT', url: '/api/v1/healthz', payload, headers: { 'content-type': contentType, accept: 'application/problem+json' } });

  it('malformed JSON is 400/2001', async () => {
    const res = await post('{"a":');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error_code: 2001, detail: 'body: malformed JSON' });
  });

  it('a body over 1 MiB is 400/2001, never 413', async () => {
    const res = await post(JSON.stringify({ a: 'x'.repeat(1024 * 1024 + 10) }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error_code: 2001 });
    expect(res.json().detail).toMatch(/too large/);
  });

  it('a non-JSON content type is 400/2001, never 415', async () => {
    const res = await post('a=b', 'application/x-www-form-urlencoded');
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/unsupported content type/);
  });
});

describe('request ids', () => {
  it('echo a well-formed X-Request-Id and use it as instance', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/nope', headers: { 'x-request-id': 'abc-123.x:y' } });
    expect(res.headers['x-request-id']).toBe('abc-123.x:y');
    expect(res.json().error_detail.instance).toBe('abc-123.x:y');
  });

  it('replace a malformed X-Request-Id with a fresh UUID', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/healthz', headers: { 'x-request-id': 'bad id <script>' } });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('are sent on successes too', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/healthz' });
    expect(res.headers['x-request-id']).toBeTruthy();
  });
});

describe('security headers', () => {
  it('are on every response', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/healthz' });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('leave out the document-only ones on JSON under /api/, which pages keep', async () => {
    const api = await svc.app.inject({ method: 'GET', url: '/api/v1/healthz' });
    const page = await svc.app.inject({ method: 'GET', url: '/docs/errors' });
    for (const name of ['cross-origin-opener-policy', 'origin-agent-cluster', 'x-dns-prefetch-control', 'x-download-options', 'x-permitted-cross-domain-policies', 'x-xss-protection']) {
      expect(api.headers[name], name).toBeUndefined();
      expect(page.headers[name], name).toBeDefined();
    }
    expect(api.headers['cross-origin-resource-policy']).toBe('same-origin');
  });
});

describe('Accept negotiation', () => {
  it.each([
    [undefined, false],
    ['*/*', false],
    ['application/json', false],
    ['garbage', false],
    ['application/problem+json', true],
    ['application/problem+json, application/json', true],
    ['application/json, application/problem+json', false],
    ['application/json;q=0.5, application/problem+json', true],
    ['application/problem+json;q=0.4, application/json;q=0.5', false],
    ['application/problem+json;q=0', false],
    ['*/*, application/problem+json;q=0.1', true],
  ])('Accept %s → problem+json %s', (accept, expected) => {
    expect(prefersProblemJson(accept)).toBe(expected);
  });
});
