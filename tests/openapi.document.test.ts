import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from '../src/rest/routeTable.ts';
import { buildOpenApiDocument } from '../src/rest/openapi/document.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { ERROR_CODES } from '../src/errors.ts';
import { ROLES } from '../src/contracts/roles.ts';
import { ORG_ROLES } from '../src/contracts/roles.ts';
import type { OpenApiDocument } from './helpers/openapiConformance.ts';
import { operationsOf } from './helpers/openapiOperations.ts';
import { PERSONALITY_PRESET_NAMES } from '../src/contracts/catalogue.ts';

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
  const operations = () => operationsOf(doc);
  const schema = (name: string) => record(record(doc.components?.schemas)[name]);
  const property = (name: string, field: string) => record(record(schema(name).properties)[field]);
  const find = (method: string, path: string) => {
    const found = operations().find((op) => op.method === method && op.path === path);
    if (!found) throw new Error(`${method} ${path} is not documented`);
    return found;
  };

  it('refers every error response to a shared one, in both media types, with Retry-After on 429 and 503; 500 and 503 everywhere', () => {
    const shared = record(doc.components?.responses);
    for (const op of operations()) {
      expect(op.statuses, `${op.method} ${op.path}`).toEqual(expect.arrayContaining([500, 503]));
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const target = String(response.$ref).replace('#/components/responses/', '');
        const resolved = record(shared[target]);
        expect(Object.keys(record(resolved.content)).sort(), `${op.method} ${op.path} ${status}`).toEqual(['application/json', 'application/problem+json']);
        if (status === '429' || status === '503') expect(record(resolved.headers)['Retry-After'], `${op.method} ${op.path} ${status}`).toBeDefined();
      }
    }
  });

  it('names every request body as a schema, required only when it has required fields (the approve body may be omitted)', () => {
    for (const op of operations()) {
      if (!op.requestBody) continue;
      const ref = op.requestBody.content['application/json']?.schema.$ref ?? '';
      expect(ref, `${op.method} ${op.path}`).toMatch(/^#\/components\/schemas\/\w+$/);
      const body = schema(ref.split('/').at(-1) ?? '');
      const required = Array.isArray(body.required) && body.required.length > 0;
      expect(op.requestBody.required, `${op.method} ${op.path}`).toBe(required);
    }
    expect(find('POST', '/approvals/{approval_id}/approve').requestBody?.required).toBe(false);
    expect(find('POST', '/users').requestBody?.required).toBe(true);
  });

  it('declares optional query parameters as plain optional values, never null', () => {
    for (const op of operations()) {
      for (const parameter of op.parameters ?? []) {
        if (parameter.in !== 'query') continue;
        expect(JSON.stringify(parameter.schema), `${op.method} ${op.path} ${parameter.name ?? ''}`).not.toContain('"null"');
      }
    }
    expect(find('GET', '/users').parameters?.find((p) => p.name === 'limit')?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 200 });
  });

  it('keeps the limits, enums and formats generators use', () => {
    for (const name of ['SetupRequest', 'LoginRequest', 'CreateUserRequest']) expect(property(name, 'username'), name).toMatchObject({ type: 'string', minLength: 1, maxLength: 128 });
    expect(property('ErrorDetail', 'error_code')).toMatchObject({ type: 'integer', enum: Object.keys(ERROR_CODES).map(Number) });
    for (const name of ['UserInfoResponse', 'UserResponse']) expect(record(property(name, 'org_roles').items).enum, name).toEqual([...ORG_ROLES]);
    for (const name of ['UserInfoResponse', 'UserResponse']) expect(property(name, 'role').enum, name).toEqual([...ROLES]);
    for (const [name, field] of [
      ['SetupAgentRequest', 'personality_preset'],
      ['UpdateAgentPersonalityRequest', 'personality_preset'],
      ['SetupAgentSummary', 'personality_preset'],
      ['PersonalityPresetInfoResponse', 'name'],
    ] as const) {
      expect(property(name, field).enum, `${name}.${field}`).toEqual([...PERSONALITY_PRESET_NAMES]);
    }
    for (const [name, field] of [
      ['UserResponse', 'id'],
      ['UserInfoResponse', 'id'],
      ['ApprovalResponse', 'id'],
      ['SessionResponse', 'user_id'],
    ] as const) {
      expect(property(name, field).format, `${name}.${field}`).toBe('uuid');
    }
    for (const [name, field] of [
      ['UserResponse', 'created_at'],
      ['SessionResponse', 'created_at'],
      ['SessionResponse', 'expires_at'],
      ['ApprovalResponse', 'created_at'],
      ['StageDecisionResponse', 'decided_at'],
      ['SetupCompleteResponse', 'completed_at'],
    ] as const) {
      expect(property(name, field).format, `${name}.${field}`).toBe('date-time');
    }
  });

  it('describes every operation and gives it an operationId no type a generator derives from it clashes with', () => {
    const schemas = new Set(Object.keys(record(doc.components?.schemas)));
    const ids = operations().map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of operations()) {
      expect(op.description?.trim(), `${op.method} ${op.path}`).toBeTruthy();
      // hey-api's names: <Id>Data, <Id>Response(s), <Id>Error(s); orval's <Id>Body and <Id>Params.
      const base = op.operationId.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
      for (const suffix of ['', 'Data', 'Response', 'Responses', 'Error', 'Errors', 'Body', 'Params']) expect(schemas.has(base + suffix), base + suffix).toBe(false);
    }
  });

  it('leaves response objects open for added fields and keeps request bodies closed', () => {
    const requestSchemas = new Set(operations().flatMap((op) => (op.requestBody ? [op.requestBody.content['application/json']?.schema.$ref.split('/').at(-1)] : [])));
    expect(requestSchemas.size).toBeGreaterThan(10);
    for (const [name, value] of Object.entries(record(doc.components?.schemas))) {
      const closed = JSON.stringify(value).includes('"additionalProperties":false');
      expect(closed, name).toBe(requestSchemas.has(name));
    }
    expect(JSON.stringify(doc.paths)).not.toContain('"additionalProperties":false');
  });

  it('declares Location, ETag, If-Match, Idempotency-Key, Set-Cookie and RateLimit-* where they apply', () => {
    const headersOf = (method: string, path: string, status: number) => Object.keys(record(find(method, path).responses[String(status)]?.headers));
    expect(headersOf('POST', '/users', 201)).toEqual(expect.arrayContaining(['Location', 'ETag', 'Idempotent-Replayed', 'RateLimit-Limit']));
    expect(headersOf('POST', '/approvals', 201)).toEqual(expect.arrayContaining(['Location', 'Idempotent-Replayed', 'RateLimit-Limit']));
    for (const path of ['/users/{user_id}', '/approvals/{approval_id}']) expect(headersOf('GET', path, 200), path).toContain('ETag');
    expect(headersOf('PATCH', '/users/{user_id}', 200)).toContain('ETag');
    for (const [method, path] of [
      ['PATCH', '/users/{user_id}'],
      ['POST', '/approvals/{approval_id}/approve'],
      ['POST', '/approvals/{approval_id}/reject'],
    ] as const) {
      expect(find(method, path).sharedParameters, path).toContain('IfMatch');
    }
    for (const [method, path] of [
      ['POST', '/users'],
      ['POST', '/approvals'],
      ['POST', '/setup/agent'],
      ['POST', '/reviews/{task_id}/stages/{stage_name}/decide'],
    ] as const) {
      expect(find(method, path).sharedParameters, path).toContain('IdempotencyKey');
    }
    for (const [path, status] of [
      ['/auth/login', 200],
      ['/auth/setup', 201],
      ['/auth/refresh', 200],
      ['/auth/change-password', 200],
    ] as const) {
      expect(headersOf('POST', path, status), path).toContain('Set-Cookie');
    }
    expect(headersOf('POST', '/auth/logout', 204)).toEqual(expect.arrayContaining(['Set-Cookie', 'Clear-Site-Data']));
  });

  it('describes the session cookie with the CSRF header, and refresh and logout as working from cookies alone', () => {
    const schemes = record(doc.components?.securitySchemes);
    expect(schemes.cookieAuth).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'session' });
    expect(schemes.csrfToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-CSRF-Token' });
    expect(String(record(schemes.cookieAuth).description)).toContain('X-CSRF-Token');
    expect(find('GET', '/capabilities').security).toEqual([{ bearerAuth: [] }, { cookieAuth: [] }, { apiKeyAuth: [] }]);
    expect(find('POST', '/users').security).toEqual([{ bearerAuth: [] }, { cookieAuth: [], csrfToken: [] }]);
    for (const path of ['/auth/refresh', '/auth/logout']) {
      expect(find('POST', path).security, path).toEqual([]);
      expect(find('POST', path).sharedParameters, path).toContain('RefreshTokenCookie');
      expect(find('POST', path).description, path).toContain('refresh_token');
    }
    expect(record(record(doc.components?.parameters).RefreshTokenCookie).description).toContain('Path=/api');
    expect(String(record(doc.info).description)).toContain('X-CSRF-Token');
  });
});

describe('API keys in the document (CONTRACT §3.5)', () => {
  const operations = () => operationsOf(doc);
  const find = (method: string, path: string) => {
    const found = operations().find((op) => op.method === method && op.path === path);
    if (!found) throw new Error(`${method} ${path} is not documented`);
    return found;
  };
  const scopeOf = (method: string, path: string) => record(record(doc.paths?.[path])[method.toLowerCase()])['x-api-key-scope'];
  const acceptsKeys = (method: string, path: string) => find(method, path).security.some((requirement) => 'apiKeyAuth' in requirement);

  it('has a second security scheme for keys, a bearer token of the form aok_…', () => {
    const schemes = record(doc.components?.securitySchemes);
    expect(schemes.apiKeyAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'aok_…' });
    expect(String(record(schemes.apiKeyAuth).description)).toContain('Authorization: Bearer');
  });

  it('lists apiKeyAuth on exactly the operations of the scope table, and names each one\'s scope', () => {
    const table: [method: string, path: string, scope: string | undefined][] = [
      ['GET', '/approvals', 'approvals:read'],
      ['GET', '/approvals/{approval_id}', 'approvals:read'],
      ['POST', '/approvals', 'approvals:write'],
      ['POST', '/approvals/{approval_id}/approve', 'approvals:decide'],
      ['POST', '/approvals/{approval_id}/reject', 'approvals:decide'],
      ['GET', '/reviews/{task_id}/stages', 'reviews:read'],
      ['POST', '/reviews/{task_id}/stages/{stage_name}/decide', 'reviews:write'],
      ['GET', '/users', 'users:read'],
      ['GET', '/users/{user_id}', 'users:read'],
      ['POST', '/auth/ws-ticket', 'events:read'],
      ['GET', '/auth/me', undefined],
      ['GET', '/capabilities', undefined],
    ];
    const setupReads = operations().filter((op) => op.method === 'GET' && op.path.startsWith('/setup/') && op.path !== '/setup/status');
    expect(setupReads.length).toBeGreaterThan(5);
    for (const op of setupReads) table.push(['GET', op.path, 'setup:read']);
    // The audit log (§4.13), once served, is read with audit:read.
    for (const op of operations().filter((o) => o.method === 'GET' && o.path.startsWith('/audit'))) table.push(['GET', op.path, 'audit:read']);
    for (const [method, path, scope] of table) {
      expect(acceptsKeys(method, path), `${method} ${path}`).toBe(true);
      expect(scopeOf(method, path), `${method} ${path}`).toBe(scope);
      expect(find(method, path).description, `${method} ${path}`).toContain(scope === undefined ? 'API keys:** accepted, whatever' : `\`${scope}\``);
    }
    const open = new Set(table.map(([method, path]) => `${method} ${path}`));
    for (const op of operations()) {
      if (open.has(`${op.method} ${op.path}`)) continue;
      expect(acceptsKeys(op.method, op.path), `${op.method} ${op.path}`).toBe(false);
      if (op.authenticated) expect(op.description, `${op.method} ${op.path}`).toContain('not available to API keys');
    }
  });

  it('documents the API-key endpoints with their statuses, Location and the secret shown once', () => {
    const create = find('POST', '/api-keys');
    expect(create.statuses).toEqual(expect.arrayContaining([201, 400, 401, 403, 404, 409, 429]));
    expect(Object.keys(record(record(create.responses['201']).headers))).toContain('Location');
    expect(find('DELETE', '/api-keys/{key_id}').statuses).toEqual(expect.arrayContaining([204, 404, 429]));
    expect(find('GET', '/api-keys').statuses).toContain(200);
    expect(find('GET', '/api-keys/{key_id}').statuses).toContain(404);
    expect(Object.keys(record(record(doc.components?.schemas).CreatedApiKeyResponse).properties ?? {})).toContain('secret');
  });
});

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {};
}
