import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATEGORIES, ERROR_CODES } from '../src/errors.ts';
import { startTestService, type TestService } from './helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

const get = (url: string) => svc.app.inject({ method: 'GET', url });

describe('GET /docs (the reference UI)', () => {
  it('serves the page at /docs itself (no redirect), loading the UI script by an absolute path', async () => {
    const res = await get('/docs');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/src="\/docs\/js\/scalar\.js\?v=[\w-]+"/);
  });

  it('serves an HTML page that loads the UI from this server and reads /api/v1/openapi.json', async () => {
    const res = await get('/docs/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('js/scalar.js');
    expect(res.body).toContain('/api/v1/openapi.json');
    // No third-party origin: the page works offline and under the CSP below.
    expect(res.body).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)[a-z0-9.-]+\.[a-z]{2,}\/[^"']*\.js/i);
  });

  it('serves the UI script itself', async () => {
    const res = await get('/docs/js/scalar.js');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.body.length).toBeGreaterThan(100_000);
  });

  it("switches Scalar's hosted extras off: Ask AI (the agent), MCP generation, the developer toolbar (Share, Deploy), telemetry", async () => {
    const res = await get('/docs');
    const literal = /createApiReference\('#app', (\{[\s\S]*?\})\)\s*<\/script>/.exec(res.body)?.[1];
    expect(literal, 'the page configures the reference').toBeDefined();
    expect(JSON.parse(literal ?? '{}')).toMatchObject({
      url: '/api/v1/openapi.json',
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: 'never',
      telemetry: false,
      withDefaultFonts: false,
    });
  });

  it('serves the UI script compressed (brotli or gzip, as accepted), and cacheable for good under its versioned URL', async () => {
    const plain = await get('/docs/js/scalar.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('accept-encoding');
    expect(plain.headers['cache-control']).toBe('public, max-age=0, must-revalidate');

    const br = await svc.app.inject({ method: 'GET', url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3);
    expect(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload)).toBe(true);

    const gz = await svc.app.inject({ method: 'GET', url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'gzip, br;q=0' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);

    // The page names the script by its content; that URL never changes meaning.
    const versioned = /src="(\/docs\/js\/scalar\.js\?v=[\w-]+)"/.exec((await get('/docs')).body)?.[1] ?? '';
    const cached = await get(versioned);
    expect(cached.statusCode).toBe(200);
    expect(cached.headers['cache-control']).toBe('public, max-age=31536000, immutable');

    const etag = String(br.headers.etag);
    const revalidated = await svc.app.inject({ method: 'GET', url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'br', 'if-none-match': etag } });
    expect(revalidated.statusCode).toBe(304);
    expect(revalidated.body).toBe('');
    expect(String(plain.headers.etag)).not.toBe(etag);
  });

  it('answers HEAD like GET', async () => {
    const res = await svc.app.inject({ method: 'HEAD', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
  });

  it('relaxes the CSP for /docs only; the API keeps the strict one', async () => {
    const docs = await get('/docs/');
    expect(docs.headers['content-security-policy']).toContain("script-src 'self' 'unsafe-inline'");
    expect(docs.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    const api = await get('/api/v1/healthz');
    expect(api.headers['content-security-policy']).toContain("default-src 'none'");
    expect(api.headers['content-security-policy']).not.toContain('unsafe-inline');
  });
});

describe('GET /docs/errors', () => {
  it('has one anchor per error category, listing its codes', async () => {
    const res = await get('/docs/errors');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    for (const category of Object.keys(ERROR_CATEGORIES)) expect(res.body).toContain(`id="${category}"`);
    for (const code of Object.keys(ERROR_CODES)) expect(res.body).toContain(`<td>${code}</td>`);
  });

  it('is where every error type points', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/nope', headers: { accept: 'application/problem+json' } });
    const problem: { type: string } = res.json();
    const type = new URL(problem.type);
    expect(type.pathname).toBe('/docs/errors');
    const page = await get(type.pathname);
    expect(page.body).toContain(`id="${type.hash.slice(1)}"`);
  });
});
