// The OpenAPI 3.1 document: trpc-to-openapi's output plus one pass that describes what the facade really sends.
import type { FastifyInstance } from 'fastify';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { z } from 'zod';
import type { Deps } from '../context/deps.ts';
import { ErrorDetailSchema, ProblemDetailSchema } from '../errors.ts';
import { appRouter } from '../routers/index.ts';
import { Pagination } from '../services/pagination.ts';
import { SERVICE_VERSION } from '../version.ts';
import { API_PREFIX, routeTable, type RestRoute } from './routeTable.ts';

export const OPENAPI_VERSION = '3.1.0';
export const API_VERSION = SERVICE_VERSION;

type Json = Record<string, unknown>;

const ErrorEnvelopeSchema = z
  .object({ data: z.null(), error: z.string(), error_detail: ErrorDetailSchema, success: z.literal(false) })
  .meta({ id: 'ErrorResponse' });

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request (validation category: 2000 business rule, 2001 request shape)',
  401: 'Missing or invalid credentials (1000) or a revoked session (1002)',
  403: 'Authenticated but not allowed (1001)',
  404: 'The addressed resource does not exist (3000)',
  409: 'Conflicts with the current state (4000), a duplicate (4001) or a stale If-Match (4002)',
  429: 'Rate limited (5000 global, 5001 per operation, 5002 concurrency cap)',
  500: 'Unexpected server error (8000) or storage failure (8002)',
  503: 'A required service is unavailable (8001)',
};

export function buildOpenApiDocument(publicUrl: string): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'agent-org API',
    description:
      'Administers an organization of software agents: probes, first-run setup, sessions, users and roles, the setup wizard, approvals and review decisions. ' +
      `Errors are described at ${publicUrl}/docs/errors. ` +
      `Live events (a WebSocket at ${publicUrl}/api/v1/ws and the tRPC subscription events.subscribe) are described by the AsyncAPI 3.0 document at ${publicUrl}/api/v1/asyncapi.json.`,
    version: API_VERSION,
    openApiVersion: OPENAPI_VERSION,
    baseUrl: `${publicUrl}${API_PREFIX}`,
    docsUrl: `${publicUrl}/docs`,
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'The access token (the `session` cookie value of login).' },
      cookieAuth: { type: 'apiKey', in: 'cookie', name: 'session', description: 'Browser session cookie; unsafe methods also need X-CSRF-Token.' },
    },
    defs: { ProblemDetail: ProblemDetailSchema, ErrorDetail: ErrorDetailSchema, ErrorResponse: ErrorEnvelopeSchema, Pagination },
  });
  for (const route of routeTable) describeRoute(doc, route);
  doc.tags = [...new Set(routeTable.flatMap((r) => r.meta.openapi.tags ?? []))].map((name) => {
    const description = TAG_DESCRIPTIONS[name];
    return description === undefined ? { name } : { name, description };
  });
  pruneSchemas(doc);
  return doc;
}

const TAG_DESCRIPTIONS: Record<string, string> = {
  probes: 'Liveness, readiness and the capability report.',
  auth: 'First-run setup, login, sessions, refresh, password change and WebSocket tickets.',
  users: 'User administration: roles and organization roles.',
  setup: 'The first-run setup wizard: company, agents, name locales, personality presets.',
  approvals: 'Approval requests and their decisions.',
  reviews: 'Decisions on the review stages of a task.',
};

const SCHEMA_REF = '#/components/schemas/';

/**
 * trpc-to-openapi registers error schemas for responses we replace, and zod-openapi names the output
 * variant of a registered schema `<Name>Output`; drop what nothing references and give the survivors
 * their plain names, so the document lists only what the API really sends.
 */
function pruneSchemas(doc: OpenAPIObject): void {
  const schemas = doc.components?.schemas;
  if (!schemas) return;
  const reachable = new Set<string>();
  const queue = refsIn({ ...doc, components: { ...doc.components, schemas: {} } });
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (reachable.has(name)) continue;
    reachable.add(name);
    queue.push(...refsIn(schemas[name]));
  }
  for (const name of Object.keys(schemas)) if (!reachable.has(name)) Reflect.deleteProperty(schemas, name);
  const renames = new Map<string, string>();
  for (const name of Object.keys(schemas)) {
    const plain = name.endsWith('Output') ? name.slice(0, -'Output'.length) : name;
    if (plain !== name && plain !== '' && !(plain in schemas)) renames.set(name, plain);
  }
  if (renames.size === 0) return;
  for (const [from, to] of renames) {
    const schema = schemas[from];
    if (schema === undefined) continue;
    schemas[to] = schema;
    Reflect.deleteProperty(schemas, from);
  }
  rewriteRefs(doc, renames);
}

function refsIn(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) refsIn(item, found);
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)) found.push(value.slice(SCHEMA_REF.length));
      else refsIn(value, found);
    }
  }
  return found;
}

function rewriteRefs(node: unknown, renames: Map<string, string>): void {
  if (Array.isArray(node)) for (const item of node) rewriteRefs(item, renames);
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)) {
        const renamed = renames.get(value.slice(SCHEMA_REF.length));
        if (renamed !== undefined) Reflect.set(node, key, SCHEMA_REF + renamed);
      } else rewriteRefs(value, renames);
    }
  }
}

function describeRoute(doc: OpenAPIObject, route: RestRoute): void {
  const operation = doc.paths?.[route.openapiPath]?.[lower(route.method)];
  if (!operation) throw new Error(`OpenAPI document lacks ${route.method} ${route.openapiPath}`);
  const generated = asRecord(asRecord(asRecord(asRecord(operation.responses)['200']).content)['application/json']).schema;
  const status = route.rest.status ?? 200;
  const responses: Json = {};

  const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
  if (route.meta.limits) Object.assign(headers, rateLimitHeaders());
  if (status === 204) {
    responses['204'] = { description: 'Done; no body', headers };
  } else {
    if (route.rest.location) headers.Location = { description: 'Path of the created resource', schema: { type: 'string' } };
    if (route.rest.etag) headers.ETag = { description: 'Strong entity tag; send it back in If-Match', schema: { type: 'string' } };
    const data = route.rest.list ? asRecord(asRecord(generated).properties).items : generated;
    const properties: Json = { data: data ?? {}, error: { type: 'null' }, error_detail: { type: 'null' }, success: { const: true, type: 'boolean' } };
    const required = ['data', 'error', 'error_detail', 'success'];
    if (route.rest.list) {
      properties.pagination = { $ref: '#/components/schemas/Pagination' };
      required.push('pagination');
    }
    responses[String(status)] = {
      description: operation.summary ?? 'Success',
      headers,
      content: { 'application/json': { schema: { type: 'object', required, properties } } },
    };
  }

  const errorStatuses = new Set<number>(errorList(route));
  errorStatuses.add(500);
  for (const code of [...errorStatuses].sort()) {
    const errorHeaders: Json = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
    if (code === 429 || code === 503) errorHeaders['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    if (code === 429) Object.assign(errorHeaders, rateLimitHeaders());
    responses[String(code)] = {
      description: STATUS_TEXT[code] ?? 'Error',
      headers: errorHeaders,
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } },
        'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetail' } },
      },
    };
  }
  operation.responses = responses;
  if (route.meta.openapi.protect === false) operation.security = [];
  else operation.security = [{ bearerAuth: [] }, { cookieAuth: [] }];
  operation.operationId = route.procedurePath.replace('.', '_');

  const components = (doc.components ??= {});
  components.headers = {
    'X-Request-Id': { description: 'Request correlation id; equals `instance` of an error', schema: { type: 'string' } },
    'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } },
  };
}

function errorList(route: RestRoute): number[] {
  const declared = route.meta.openapi.errorResponses;
  if (Array.isArray(declared)) return declared;
  if (declared) return Object.keys(declared).map(Number);
  return [];
}

function rateLimitHeaders(): Json {
  return {
    'RateLimit-Limit': { description: 'Calls allowed in the window of this operation', schema: { type: 'integer' } },
    'RateLimit-Remaining': { description: 'Calls left now', schema: { type: 'integer' } },
    'RateLimit-Reset': { description: 'Seconds until a slot frees', schema: { type: 'integer' } },
  };
}

function lower(method: string): 'get' | 'post' | 'put' | 'patch' | 'delete' {
  switch (method) {
    case 'POST':
      return 'post';
    case 'PUT':
      return 'put';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return 'get';
  }
}

function asRecord(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {};
}

export async function openApiRoute(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  let body: string | undefined;
  app.get('/api/v1/openapi.json', async (_req, reply) => {
    body ??= JSON.stringify(buildOpenApiDocument(opts.deps.config.publicUrl));
    return reply.type('application/json; charset=utf-8').send(body);
  });
}
