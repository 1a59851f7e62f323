// CORS when CORS_ORIGINS is set (CONTRACT §2.4, §3.7): what a listed origin's browser may send and read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.ts';

const ORIGIN = 'https://app.example.com';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { CORS_ORIGINS: ORIGIN } });
});
afterAll(() => svc.close());

const listed = (header: string | string[] | number | undefined) =>
  String(header ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

describe('CORS for a listed origin', () => {
  it('a preflight allows Idempotency-Key and If-Match (and what the API needs besides) with credentials', async () => {
    const res = await svc.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/users',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'idempotency-key, if-match, content-type, x-csrf-token' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(listed(res.headers['access-control-allow-headers'])).toEqual(expect.arrayContaining(['idempotency-key', 'if-match', 'content-type', 'x-csrf-token', 'authorization']));
  });

  it('a response exposes ETag, Location, Retry-After, RateLimit-*, X-Request-Id and Idempotent-Replayed to the page', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/healthz', headers: { origin: ORIGIN } });
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(listed(res.headers['access-control-expose-headers'])).toEqual(
      expect.arrayContaining(['etag', 'location', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-request-id', 'idempotent-replayed']),
    );
  });

  it('another origin gets no CORS headers', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/healthz', headers: { origin: 'https://evil.example' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
