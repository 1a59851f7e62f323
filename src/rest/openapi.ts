// The OpenAPI 3.1 document: trpc-to-openapi's output plus one pass that describes what the facade really sends.
import type { FastifyInstance } from 'fastify';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { z } from 'zod';
import type { Deps } from '../context/deps.ts';
import { ERROR_CODES, ErrorDetailSchema, ProblemDetailSchema, type ErrorCode } from '../errors.ts';
import { OPERATION_POLICIES } from '../limits/policy.ts';
import { appRouter } from '../routers/index.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../services/idempotency/idempotency.ts';
import { Pagination } from '../services/pagination.ts';
import type { Access } from '../trpc.ts';
import { SERVICE_VERSION } from '../version.ts';
import { API_PREFIX, routeTable, type RestRoute } from './routeTable.ts';

export const OPENAPI_VERSION = '3.1.0';
export const API_VERSION = SERVICE_VERSION;

type Json = Record<string, unknown>;
type Components = NonNullable<OpenAPIObject['components']>;
type Parameter = NonNullable<Components['parameters']>[string];
type Response = NonNullable<Components['responses']>[string];
type Header = NonNullable<Components['headers']>[string];
type Operation = NonNullable<NonNullable<OpenAPIObject['paths']>[string]['get']>;

const ErrorEnvelopeSchema = z
  .object({ data: z.null(), error: z.string(), error_detail: ErrorDetailSchema, success: z.literal(false) })
  .meta({ id: 'ErrorResponse' });

const SCHEMA_REF = '#/components/schemas/';
const ref = (kind: 'schemas' | 'responses' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

// ---------------------------------------------------------------------------------------------------------
// Shared components: security schemes, headers, parameters and the error responses every operation refers to.

const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description:
      'The access token: the value of the `session` cookie that login, setup, refresh and change-password set (`Set-Cookie: session=<token>`). ' +
      'Requests authenticated this way need no CSRF token.',
  },
  cookieAuth: {
    type: 'apiKey',
    in: 'cookie',
    name: 'session',
    description:
      'The `session` cookie (HttpOnly, SameSite=Strict, Path=/api, Secure unless `COOKIE_SECURE=false`), set by login, setup, refresh and ' +
      'change-password. A POST, PUT, PATCH or DELETE authenticated by it must also send `X-CSRF-Token` (the `csrfToken` scheme): ' +
      'copy the value of the `csrf_token` cookie, which scripts can read, into that header. Without it: 403/1001.',
  },
  csrfToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-CSRF-Token',
    description:
      'The value of the `csrf_token` cookie (readable by scripts, Path=/, bound to the session and renewed with it), required with ' +
      '`cookieAuth` on POST, PUT, PATCH and DELETE (double submit). Bearer requests do not need it.',
  },
} as const;

const HEADERS = {
  'X-Request-Id': {
    description: 'Request correlation id (an incoming well-formed `X-Request-Id` is kept); equals `instance` of an error.',
    required: true,
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying; the same number as `retry_after` in the body.', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Limit': { description: 'Calls allowed in the window of the limit that applies (sent while rate limits are enabled).', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Remaining': { description: 'Calls left in that window now.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until a call is allowed again.', schema: { type: 'integer', minimum: 0 } },
  Location: { description: 'Path of the created resource.', required: true, schema: { type: 'string' } },
  ETag: { description: 'Strong entity tag of the returned representation; send it back in `If-Match`.', required: true, schema: { type: 'string' } },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`; nothing was changed.',
    schema: { type: 'string', enum: ['true'] },
  },
  'Set-Cookie': {
    description:
      'Three cookies, each in its own `Set-Cookie` header: `session` (the access token; HttpOnly, Path=/api), `csrf_token` (readable by ' +
      'scripts, Path=/) and `refresh_token` (HttpOnly, Path=/api); all SameSite=Strict, Secure unless `COOKIE_SECURE=false`, Max-Age = ' +
      'their lifetimes (`expires_in`, `refresh_expires_in`). Non-browser clients read the access token from `session`.',
    required: true,
    schema: { type: 'string' },
  },
  'Set-Cookie-Cleared': {
    description: 'Clears the `session`, `csrf_token` and `refresh_token` cookies (empty values, Max-Age=0, the same paths).',
    required: true,
    schema: { type: 'string' },
  },
  'Clear-Site-Data': { description: 'Asks the browser to drop the cookies of this site.', required: true, schema: { type: 'string', enum: ['"cookies"'] } },
} as const satisfies Record<string, Header>;
type HeaderName = keyof typeof HEADERS;

const PARAMETERS: Record<string, Parameter> = {
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'Only act if the resource still has one of these entity tags (the `ETag` of a previous read), comma-separated, or `*`. ' +
      'A stale tag is 409/4002: read again and retry. Without the header the change is unconditional.',
    schema: { type: 'string' },
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes a retry safe (IETF draft "The Idempotency-Key HTTP Header Field"): 1..255 printable ASCII characters, unique per request. ' +
      'A repeat by the same user with the same key and the same body within 24 h gets the first answer again (with ' +
      '`Idempotent-Replayed: true`) and changes nothing; the same key with another body is 409/4000; while the first request is still ' +
      'running, 429/5002 with `Retry-After: 1`. A failed request gives its key back.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_PATTERN.source },
  },
  SessionCookie: {
    name: 'session',
    in: 'cookie',
    required: false,
    description: 'The access token cookie (HttpOnly, Path=/api), valid or expired; a browser sends it by itself.',
    schema: { type: 'string' },
  },
  RefreshTokenCookie: {
    name: 'refresh_token',
    in: 'cookie',
    required: false,
    description:
      'The single-use refresh token (HttpOnly, SameSite=Strict, Path=/api, Secure unless `COOKIE_SECURE=false`, Max-Age = ' +
      '`refresh_expires_in`), set with the session by login, setup, refresh and change-password; a browser sends it by itself.',
    schema: { type: 'string' },
  },
};

type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 429 | 500 | 503;

const ERROR_RESPONSES: Record<ErrorStatus, { name: string; description: string; headers: HeaderName[] }> = {
  400: { name: 'BadRequest', description: 'Invalid request: 2000 breaks a business rule, 2001 has the wrong shape (the detail names the field).', headers: [] },
  401: { name: 'Unauthorized', description: 'Missing or invalid credentials (1000), or a session that was ended (1002).', headers: [] },
  403: { name: 'Forbidden', description: 'Authenticated but not allowed (1001).', headers: [] },
  404: { name: 'NotFound', description: 'The resource the path names does not exist (3000).', headers: [] },
  409: { name: 'Conflict', description: 'Conflicts with the current state (4000), a duplicate (4001) or a stale If-Match (4002).', headers: [] },
  429: {
    name: 'TooManyRequests',
    description: 'Rate limited: 5000 global, 5001 per operation, 5002 one call in flight. Retry after `Retry-After` seconds.',
    headers: ['Retry-After'],
  },
  500: { name: 'InternalError', description: 'Unexpected server error (8000) or storage failure (8002); quote `instance` when reporting it.', headers: [] },
  503: {
    name: 'ServiceUnavailable',
    description: 'Unavailable (8001): the database is unreachable or overloaded, or the service is shutting down. Retry later.',
    headers: ['Retry-After'],
  },
};

const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] as const;

function errorResponseComponent(status: ErrorStatus): Response {
  const { description, headers } = ERROR_RESPONSES[status];
  const declared: Record<string, Header> = { 'X-Request-Id': ref('headers', 'X-Request-Id') };
  for (const name of headers) declared[name] = status === 429 && name === 'Retry-After' ? { ...HEADERS[name], required: true } : ref('headers', name);
  // An operation with a limit of its own counts the call before it fails for another reason, and says so.
  for (const name of RATE_LIMIT_HEADERS) declared[name] ??= ref('headers', name);
  return {
    description,
    headers: declared,
    content: {
      'application/json': { schema: ref('schemas', 'ErrorResponse') },
      'application/problem+json': { schema: ref('schemas', 'ProblemDetail') },
    },
  };
}

const INFO_DESCRIPTION = (publicUrl: string) =>
  `Administers an organization of software agents: probes, first-run setup, sessions, users and roles, the setup wizard, approvals and review decisions.

## Authentication
Sign in with \`POST /auth/login\` (or create the first user, the CEO, with \`POST /auth/setup\`). Both set three cookies: \`session\` (the access token), \`csrf_token\` and \`refresh_token\`.
- **Non-browser clients** send the access token as \`Authorization: Bearer <session cookie value>\` and need nothing else.
- **Browsers** send the cookies by themselves. A POST, PUT, PATCH or DELETE authenticated by the \`session\` cookie must also carry the header \`X-CSRF-Token\` with the value of the \`csrf_token\` cookie, else 403/1001. In this reference's *try it*: after signing in through *try it*, copy the \`csrf_token\` cookie (the browser's developer tools, or \`document.cookie\`) into the \`X-CSRF-Token\` field of the \`csrfToken\` scheme — or use \`bearerAuth\` with the \`session\` value, which needs no CSRF token.
- \`POST /auth/refresh\` and \`POST /auth/logout\` work from the cookies alone.

## Errors
Every error is a ProblemDetail (\`Accept: application/problem+json\`) or the same inside the envelope (\`ErrorResponse\`, any other \`Accept\`). Each \`error_code\` and when it is sent: ${publicUrl}/docs/errors. Retry only when \`retryable\` is true, after \`retry_after\` seconds (also the \`Retry-After\` header).

## Live events
A WebSocket at ${publicUrl}/api/v1/ws and the tRPC subscription events.subscribe, described by the AsyncAPI 3.0 document at ${publicUrl}/api/v1/asyncapi.json.

Besides what each operation lists, any request can be answered below the operations: 404/3002 for an unknown path, 405/2001 (with \`Allow\`) for a method the path does not serve, 400/2001 for a body over 1 MiB or a malformed URL, 408, 414 and 431 (2001) for a request that is too slow, a URL or headers that are too long, and 503/8001 while the service shuts down.

## Compatibility
Fields may be added to responses (and new error codes to the \`error_code\` list) without a new major version: ignore what you do not know. Response schemas therefore do not forbid additional properties. Request bodies are strict: an unknown field is 400/2001.

## Rate limits
Limited operations send \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`; a 429 carries \`Retry-After\`. Every operation except the probes and \`GET /setup/status\` counts toward a global per-user (or, signed out, per-IP) limit.`;

// ---------------------------------------------------------------------------------------------------------

export function buildOpenApiDocument(publicUrl: string): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'agent-org API',
    description: INFO_DESCRIPTION(publicUrl),
    version: API_VERSION,
    openApiVersion: OPENAPI_VERSION,
    baseUrl: `${publicUrl}${API_PREFIX}`,
    docsUrl: `${publicUrl}/docs`,
    securitySchemes: { ...SECURITY_SCHEMES },
    defs: { ProblemDetail: ProblemDetailSchema, ErrorDetail: ErrorDetailSchema, ErrorResponse: ErrorEnvelopeSchema, Pagination },
  });
  const components = (doc.components ??= {});
  components.headers = Object.fromEntries(Object.entries(HEADERS).filter(([name]) => !['Set-Cookie', 'Set-Cookie-Cleared'].includes(name)));
  components.parameters = PARAMETERS;
  components.responses = Object.fromEntries(
    Object.entries(ERROR_RESPONSES).map(([status, { name }]) => [name, errorResponseComponent(errorStatusOf(Number(status)))]),
  );
  const schemas = (components.schemas ??= {});
  for (const route of routeTable) describeRoute(doc, schemas, route);
  doc.tags = [...new Set(routeTable.flatMap((r) => r.meta.openapi.tags ?? []))].map((name) => {
    const description = TAG_DESCRIPTIONS[name];
    return description === undefined ? { name } : { name, description };
  });
  pruneSchemas(doc);
  openResponseSchemas(doc);
  assertNoGeneratedNameClashes(doc);
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

// ---------------------------------------------------------------------------------------------------------
// One operation: what its tier, input, limits and meta imply.

/** One reason an operation answers with an error: the code and when. */
/**
 * One reason an operation answers with an error: the code and when. `common` marks what the shared response's
 * own description already says for every operation, so a status with nothing else keeps that description.
 */
type Outcome = { code: ErrorCode; when: string; common?: true };

function describeRoute(doc: OpenAPIObject, schemas: Record<string, unknown>, route: RestRoute): void {
  const operation = doc.paths?.[route.openapiPath]?.[lower(route.method)];
  if (!operation) throw new Error(`OpenAPI document lacks ${route.method} ${route.openapiPath}`);
  const access = accessOf(route);
  const mutation = route.type === 'mutation';

  operation.operationId = route.meta.openapi.operationId ?? route.procedurePath.replace('.', '_');
  operation.description = operationDescription(route, access);
  operation.security = access.authenticated ? [{ bearerAuth: [] }, mutation ? { cookieAuth: [], csrfToken: [] } : { cookieAuth: [] }] : [];

  const parameters: Parameter[] = (operation.parameters ?? []).map((parameter) => described(plainOptional(parameter), route));
  if (route.rest.ifMatch) parameters.push(ref('parameters', 'IfMatch'));
  if (route.rest.idempotencyKey) parameters.push(ref('parameters', 'IdempotencyKey'));
  for (const cookie of route.rest.cookies?.reads ?? []) parameters.push(ref('parameters', cookie === 'session' ? 'SessionCookie' : 'RefreshTokenCookie'));
  if (parameters.length > 0) operation.parameters = parameters;
  else Reflect.deleteProperty(operation, 'parameters');

  nameRequestBody(operation, schemas, route);
  operation.responses = { ...successResponse(operation, route), ...errorResponses(route) };
}

function accessOf(route: RestRoute): Access {
  const access = route.meta.access;
  // Every procedure is built from a tier (src/trpc.ts), which stamps this; one built otherwise would go undescribed.
  if (!access) throw new Error(`${route.procedurePath} is not built from a procedure tier of src/trpc.ts`);
  return access;
}

function successResponse(operation: Operation, route: RestRoute): Json {
  const status = route.rest.status ?? 200;
  const headers: Json = { 'X-Request-Id': ref('headers', 'X-Request-Id') };
  if (route.meta.limits) for (const name of RATE_LIMIT_HEADERS) headers[name] = ref('headers', name);
  if (route.rest.location) headers.Location = ref('headers', 'Location');
  if (route.rest.etag) headers.ETag = ref('headers', 'ETag');
  if (route.rest.idempotencyKey) headers['Idempotent-Replayed'] = ref('headers', 'Idempotent-Replayed');
  const writes = route.rest.cookies?.writes;
  if (writes === 'issue') headers['Set-Cookie'] = HEADERS['Set-Cookie'];
  if (writes === 'clear') {
    headers['Set-Cookie'] = HEADERS['Set-Cookie-Cleared'];
    headers['Clear-Site-Data'] = ref('headers', 'Clear-Site-Data');
  }
  const description = typeof operation.summary === 'string' ? operation.summary : 'Success';
  if (status === 204) return { 204: { description: `${description} (no body)`, headers } };

  const generated = record(record(record(record(record(operation.responses)['200']).content)['application/json']).schema);
  const data = route.rest.list ? record(generated.properties).items : generated;
  const properties: Json = { data: data ?? {}, error: { type: 'null' }, error_detail: { type: 'null' }, success: { type: 'boolean', const: true } };
  const required = ['data', 'error', 'error_detail', 'success'];
  if (route.rest.list) {
    properties.pagination = ref('schemas', 'Pagination');
    required.push('pagination');
  }
  return { [status]: { description, headers, content: { 'application/json': { schema: { type: 'object', required, properties } } } } };
}

/** Every error the operation can answer with, derived from its tier, input, limits and meta. */
export function outcomesOf(route: RestRoute): Outcome[] {
  const access = accessOf(route);
  const mutation = route.type === 'mutation';
  const added = Object.entries(route.meta.errors ?? {}).flatMap(([code, when]) => (when === undefined ? [] : [{ code: errorCodeOf(Number(code)), when }]));
  const outcomes: Outcome[] = [];

  if (readsInput(route)) {
    outcomes.push({ code: 2001, when: 'The request has the wrong shape; the detail names the field (`body.x`, `query.x`, `path.x`).', common: true });
  }
  if (route.rest.idempotencyKey) outcomes.push({ code: 2001, when: 'A malformed `Idempotency-Key` header.' });
  if (access.authenticated) {
    outcomes.push(
      { code: 1000, when: 'No credentials, or a missing, malformed, unknown or expired `session` cookie or bearer token.', common: true },
      {
        code: 1002,
        when: 'The session was ended: logged out, revoked, evicted, ended by a password change or user deletion, or its refresh token replayed.',
        common: true,
      },
    );
    if (access.roles) outcomes.push({ code: 1001, when: `The caller's role is not ${access.roles.map((r) => `\`${r}\``).join(', ')}.` });
    if (route.meta.allowPendingPasswordChange !== true) outcomes.push({ code: 1001, when: 'The user must change the initial password first (`password change required`).' });
    if (mutation) outcomes.push({ code: 1001, when: 'Authenticated by the `session` cookie without an `X-CSRF-Token` header equal to the `csrf_token` cookie.' });
  }
  if (route.rest.ifMatch) outcomes.push({ code: 4002, when: '`If-Match` names none of the current entity tags.' });
  if (route.rest.idempotencyKey) outcomes.push({ code: 4000, when: 'This `Idempotency-Key` was used with a different request.' });
  if (access.limited) outcomes.push({ code: 5000, when: 'The global limit of the caller (the user, or the IP address when signed out).', common: true });
  const op = route.meta.limits?.op;
  if (op !== undefined) {
    const policy = OPERATION_POLICIES[op];
    const per = policy.subject === 'user' ? 'user' : 'IP address';
    outcomes.push({ code: 5001, when: `This operation's own limit: by default ${policy.limit} calls per ${policy.window_s} s per ${per} (sliding window).` });
    if (policy.concurrency) outcomes.push({ code: 5002, when: `A previous call of this operation by the same ${per} is still running.` });
  }
  if (route.rest.idempotencyKey) outcomes.push({ code: 5002, when: 'The first request with this `Idempotency-Key` is still running.' });
  outcomes.push(...added);
  outcomes.push({ code: 8000, when: 'An unexpected failure.', common: true }, { code: 8002, when: 'A database error other than unavailability.', common: true });
  if (!added.some((o) => o.code === 8001)) outcomes.push({ code: 8001, when: 'The database is unreachable or overloaded, or the service is shutting down.', common: true });
  return outcomes;
}

function errorResponses(route: RestRoute): Json {
  const byStatus = Map.groupBy(outcomesOf(route), (o) => ERROR_CODES[o.code].status);
  const responses: Json = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const outcomes = byStatus.get(status) ?? [];
    const shared = ref('responses', ERROR_RESPONSES[errorStatusOf(status)].name);
    if (outcomes.every((o) => o.common)) {
      responses[status] = shared;
      continue;
    }
    const lines = outcomes.map((o) => `- \`${o.code}\` ${ERROR_CODES[o.code].name}: ${o.when}`);
    // OpenAPI 3.1 lets a reference carry its own description: the shared response, told for this operation.
    responses[status] = { ...shared, description: lines.join('\n') };
  }
  return responses;
}

/** Whether the REST facade reads the operation's input (so a bad one is 400): declared input, or a body it refuses fields in. */
function readsInput(route: RestRoute): boolean {
  if (route.meta.ignoresInput === true) return false;
  return route.inputShape !== null || route.method !== 'GET';
}

function operationDescription(route: RestRoute, access: Access): string {
  const parts: string[] = [];
  const own = route.meta.openapi.description;
  if (own !== undefined) parts.push(own);
  if (!access.authenticated) parts.push('**Who:** anyone; no credential needed.');
  else {
    const who = access.roles ? `a signed-in user with role ${access.roles.map((r) => `\`${r}\``).join(', ')}` : 'any signed-in user';
    const pending =
      route.meta.allowPendingPasswordChange === true ? ' Also a user who must still change the initial password.' : '';
    const csrf = route.type === 'mutation' ? ' With cookie authentication, send `X-CSRF-Token`.' : '';
    parts.push(`**Who:** ${who} (bearer token or \`session\` cookie).${pending}${csrf}`);
  }
  const op = route.meta.limits?.op;
  if (!access.limited) parts.push('**Rate limits:** none.');
  else if (op === undefined) parts.push('**Rate limits:** the global per-user (or per-IP) limit.');
  else {
    const policy = OPERATION_POLICIES[op];
    const per = policy.subject === 'user' ? 'user' : 'IP address';
    const inflight = policy.concurrency ? `, one call in flight per ${per}` : '';
    parts.push(`**Rate limits:** the global limit, and \`${op}\`: ${policy.limit} calls per ${policy.window_s} s per ${per}${inflight} (defaults; \`RATE_LIMITS\` may change them).`);
  }
  if (route.rest.idempotencyKey) parts.push('**Retries:** send an `Idempotency-Key` to make a retry safe.');
  if (route.rest.ifMatch) parts.push('**Concurrency:** send `If-Match` with the `ETag` of your last read to change only what you saw.');
  const cookies = route.rest.cookies?.writes;
  if (cookies === 'issue') parts.push('**Cookies:** sets `session`, `csrf_token` and `refresh_token` (a new session token; never the presented one).');
  if (cookies === 'clear') parts.push('**Cookies:** clears `session`, `csrf_token` and `refresh_token`.');
  return parts.join('\n\n');
}

/**
 * The request body as a named schema (generators then name its type), required only when it has required
 * fields: a body whose fields are all optional may be omitted (an empty body is no input).
 */
function nameRequestBody(operation: Operation, schemas: Record<string, unknown>, route: RestRoute): void {
  const body = record(operation.requestBody);
  const media = record(record(body.content)['application/json']);
  const schema = record(media.schema);
  if (Object.keys(schema).length === 0) {
    Reflect.deleteProperty(operation, 'requestBody');
    return;
  }
  const name = requestSchemaName(route);
  if (name in schemas) throw new Error(`request body schema ${name} of ${route.procedurePath} clashes with another schema`);
  schemas[name] = defaultsInProse(schema);
  const required = Array.isArray(schema.required) && schema.required.length > 0;
  operation.requestBody = { required, content: { 'application/json': { schema: ref('schemas', name) } } };
}

/**
 * A request field's default, said in words instead of `default`: openapi-typescript (7.x, `defaultNonNullable`
 * on by default) types a field with a `default` as required, so generated clients would have to send what the
 * server fills in anyway (openapi-ts/openapi-typescript#1741, #2012).
 */
function defaultsInProse(schema: Json): Json {
  const properties = record(schema.properties);
  for (const [field, value] of Object.entries(properties)) {
    const property = record(value);
    if (!('default' in property)) continue;
    const { default: fallback, ...rest } = property;
    const said = `Default: \`${JSON.stringify(fallback)}\`.`;
    properties[field] = { ...rest, description: typeof rest.description === 'string' ? `${rest.description} ${said}` : said };
  }
  return Object.keys(properties).length === 0 ? schema : { ...schema, properties };
}

/** The id the input schema was registered with (e.g. `CreateUserRequest`), else `<Area><Name>Request`. */
function requestSchemaName(route: RestRoute): string {
  const id = route.inputId;
  if (id !== undefined) return id;
  return `${route.procedurePath.split('.').map(pascal).join('')}Request`;
}

/**
 * A query string cannot say `null`: an optional query parameter is plain optional in the document, whatever
 * the procedure accepts from other transports (orval would otherwise send `?limit=null`).
 */
function plainOptional(parameter: Parameter): Parameter {
  if ('$ref' in parameter || parameter.schema === undefined || '$ref' in parameter.schema) return parameter;
  const { anyOf, ...rest } = parameter.schema;
  if (anyOf === undefined) return parameter;
  const others = anyOf.filter((s) => '$ref' in s || s.type !== 'null');
  if (others.length === anyOf.length) return parameter;
  const [only] = others;
  return { ...parameter, schema: others.length === 1 && only !== undefined ? { ...only, ...rest } : { ...rest, anyOf: others } };
}

/** trpc-to-openapi unwraps an optional parameter's schema, and the description given to the optional with it. */
function described(parameter: Parameter, route: RestRoute): Parameter {
  if ('$ref' in parameter || parameter.description !== undefined) return parameter;
  const description = route.inputShape?.[parameter.name]?.description;
  return description === undefined ? parameter : { ...parameter, description };
}

// ---------------------------------------------------------------------------------------------------------
// Whole-document passes.

/**
 * trpc-to-openapi registers error schemas for responses we replace, and zod-openapi names the output
 * variant of a registered schema `<Name>Output`; drop what nothing references and give the survivors
 * their plain names, so the document lists only what the API really sends.
 */
function pruneSchemas(doc: OpenAPIObject): void {
  const schemas = doc.components?.schemas;
  if (!schemas) return;
  const reachable = reachableSchemas(doc, { ...doc, components: { ...doc.components, schemas: {} } });
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

/**
 * Decision (docs/foundation.md): response schemas are open. zod-openapi closes every output object
 * (`additionalProperties: false`), so a strict client validator would reject a response the day a field is
 * added; clients are told to ignore unknown fields instead. Request bodies stay closed: the server refuses
 * unknown fields.
 */
function openResponseSchemas(doc: OpenAPIObject): void {
  const schemas = doc.components?.schemas ?? {};
  const inRequests = new Set<string>();
  const inResponses = new Set<string>();
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(record(item))) {
      const op = record(operation);
      for (const name of reachableSchemas(doc, op.requestBody)) inRequests.add(name);
      for (const name of reachableSchemas(doc, [op.responses, doc.components?.responses])) inResponses.add(name);
      openObjects(op.responses);
    }
  }
  for (const name of inResponses) {
    if (inRequests.has(name)) continue;
    openObjects(schemas[name]);
  }
}

function openObjects(node: unknown): void {
  if (Array.isArray(node)) for (const item of node) openObjects(item);
  else if (typeof node === 'object' && node !== null) {
    if ('additionalProperties' in node && node.additionalProperties === false) Reflect.deleteProperty(node, 'additionalProperties');
    for (const value of Object.values(node)) openObjects(value);
  }
}

/**
 * hey-api and orval name types after the operationId (`<OperationId>Response`, `…Data`, `…Errors`, `…Body`, `…Params`):
 * one that equals a schema's name makes them rename one of the two (`SetupStatusResponse2`).
 */
const GENERATED_SUFFIXES = ['', 'Data', 'Response', 'Responses', 'Error', 'Errors', 'Body', 'Params'];

function assertNoGeneratedNameClashes(doc: OpenAPIObject): void {
  const schemaNames = new Set(Object.keys(doc.components?.schemas ?? {}).map((n) => n.toLowerCase()));
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(record(item))) {
      const id = record(operation).operationId;
      if (typeof id !== 'string') continue;
      const base = id.split(/[_\W]+/).map(pascal).join('');
      for (const suffix of GENERATED_SUFFIXES) {
        if (schemaNames.has(`${base}${suffix}`.toLowerCase())) {
          throw new Error(`operationId ${id} clashes with schema ${base}${suffix} in generated clients; give the procedure an openapi.operationId`);
        }
      }
    }
  }
}

function reachableSchemas(doc: OpenAPIObject, from: unknown): Set<string> {
  const schemas = doc.components?.schemas ?? {};
  const reachable = new Set<string>();
  const queue = refsIn(from);
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (reachable.has(name)) continue;
    reachable.add(name);
    queue.push(...refsIn(schemas[name]));
  }
  return reachable;
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

// ---------------------------------------------------------------------------------------------------------

function errorCodeOf(code: number): ErrorCode {
  const known = Object.keys(ERROR_CODES).map(Number).find((c): c is ErrorCode => c === code);
  if (known === undefined) throw new Error(`unknown error code ${code}`);
  return known;
}

function errorStatusOf(status: number): ErrorStatus {
  const known = ([400, 401, 403, 404, 409, 429, 500, 503] as const).find((s) => s === status);
  if (known === undefined) throw new Error(`no shared error response for status ${status}`);
  return known;
}

function pascal(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
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

function record(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {};
}

export async function openApiRoute(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  let body: string | undefined;
  app.get('/api/v1/openapi.json', async (_req, reply) => {
    body ??= JSON.stringify(buildOpenApiDocument(opts.deps.config.publicUrl));
    return reply.type('application/json; charset=utf-8').send(body);
  });
}
