import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from '../src/rest/routeTable.ts';
import { buildOpenApiDocument } from '../src/rest/openapi.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import type { OpenApiDocument } from './helpers/openapiConformance.ts';

let svc: TestService;
let doc: OpenApiDocument;
beforeAll(async () => {
  // Limits off: the route sweep below sends a few hundred anonymous requests from one address.
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  const res = await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  doc = res.json();
});
afterAll(() => svc.close());

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** `METHOD /template` of every operation the document describes. */
function documentedOperations(document: OpenApiDocument): string[] {
  return Object.entries(document.paths ?? {})
    .flatMap(([path, item]) => METHODS.filter((m) => m in item).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
}

/** Every URL Fastify serves, read from its route tree (`printRoutes` indents children under their prefix). */
function servedUrls(tree: string): string[] {
  const urls: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    const url = (depth > 0 ? (stack[depth - 1] ?? '') : '') + (match[2] ?? '');
    stack[depth] = url;
    stack.length = depth + 1;
    urls.push(url);
  }
  return urls;
}

/** A concrete URL for a template; path parameters get a harmless value. */
function concrete(template: string): string {
  return `/api/v1${template.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'agent_index' ? '0' : 'x'))}`;
}

describe('GET /api/v1/openapi.json', () => {
  it('is a valid OpenAPI document (swagger-parser)', async () => {
    // A fresh copy: validate() dereferences the document it is given in place.
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    await expect(SwaggerParser.validate(res.json())).resolves.toMatchObject({ openapi: '3.1.0' });
  });

  it('is OpenAPI 3.1.0 describing version 0.9.0', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toMatchObject({ openapi: '3.1.0', info: { version: '0.9.0', title: expect.any(String) } });
  });

  it('names the /api/v1 base of PUBLIC_URL as its server', () => {
    expect(doc.servers).toEqual([{ url: 'http://agent-org.test/api/v1' }]);
  });

  it('is what buildOpenApiDocument builds (the linted file and the served one agree)', () => {
    expect(doc).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument('http://agent-org.test'))));
  });

  it('lists only schemas something references', () => {
    const text = JSON.stringify(doc);
    for (const name of Object.keys(doc.components?.schemas ?? {})) {
      expect(text, `components.schemas.${name} is unused`).toContain(`"#/components/schemas/${name}"`);
    }
  });
});

describe('documented operations and served routes', () => {
  it('every route of the facade is documented and every documented operation is in the facade', () => {
    const facade = routeTable.map((r) => `${r.method} ${r.openapiPath}`).sort();
    expect(facade.length).toBeGreaterThan(0);
    expect(documentedOperations(doc)).toEqual(facade);
  });

  it('every URL served under /api/v1 is a documented path (besides the documents themselves and the WebSocket, which AsyncAPI describes)', () => {
    const undocumented = new Set(['/api/v1/openapi.json', '/api/v1/asyncapi.json', '/api/v1/ws']);
    const served = new Set(servedUrls(svc.app.printRoutes({ commonPrefix: false })).filter((u) => u.startsWith('/api/v1/') && !undocumented.has(u)));
    expect(served.size).toBeGreaterThan(0);
    const documented = new Set(Object.keys(doc.paths ?? {}).map((p) => `/api/v1${p.replace(/\{(\w+)\}/g, ':$1')}`));
    expect([...served].sort()).toEqual([...documented].sort());
  });

  it('exactly the documented methods are served on each documented path (others answer 405)', async () => {
    const served: string[] = [];
    for (const path of Object.keys(doc.paths ?? {})) {
      for (const method of METHODS) {
        const res = await svc.app.inject({ method: method.toUpperCase() as Uppercase<typeof method>, url: concrete(path), headers: { 'content-type': 'application/json' }, payload: '{}' });
        const body = res.body === '' ? {} : res.json();
        const unknown = res.statusCode === 405 || (res.statusCode === 404 && body.error_detail?.error_code === 3002);
        if (res.statusCode === 405) expect(res.headers.allow, `${method} ${path}`).toBeTruthy();
        if (!unknown) served.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(served.sort()).toEqual(documentedOperations(doc));
  });
});

describe('document details', () => {
  it('marks public operations with an empty security requirement and others with bearer or cookie', () => {
    const healthz = doc.paths?.['/healthz']?.get as { security: unknown[] };
    const capabilities = doc.paths?.['/capabilities']?.get as { security: unknown[] };
    expect(healthz.security).toEqual([]);
    expect(capabilities.security).toEqual([{ bearerAuth: [] }, { cookieAuth: [] }]);
  });

  it('documents every error response in both media types, with Retry-After on 429 and 503', () => {
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const method of METHODS) {
        const operation = item[method] as { responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }> } | undefined;
        if (!operation) continue;
        expect(operation.responses['500'], `${method} ${path} documents 500`).toBeDefined();
        for (const [status, response] of Object.entries(operation.responses)) {
          if (Number(status) < 400) continue;
          expect(Object.keys(response.content ?? {}).sort(), `${method} ${path} ${status}`).toEqual(['application/json', 'application/problem+json']);
          if (status === '429' || status === '503') expect(response.headers?.['Retry-After'], `${method} ${path} ${status}`).toBeDefined();
        }
      }
    }
  });
});
