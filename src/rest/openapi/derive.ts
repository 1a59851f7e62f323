// One operation's description, derived from its procedure's tier and meta: who may call, parameters, headers, every status it can send.
import { getInputOutputParsers, type OpenAPIObject } from 'trpc-to-openapi';
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../../errors.ts';
import { OPERATION_POLICIES } from '../../limits/policy.ts';
import type { Access } from '../../trpc.ts';
import type { RestRoute } from '../routeTable.ts';
import { ERROR_RESPONSES, HEADERS, RATE_LIMIT_HEADERS, TAG_DESCRIPTIONS, errorStatusOf } from './components.ts';
import { pascal, record, ref, type Json, type Operation, type Parameter } from './nodes.ts';

/**
 * One reason an operation answers with an error: the code and when. `common` marks what the shared response's
 * own description already says for every operation, so a status with nothing else keeps that description.
 */
type Outcome = { code: ErrorCode; when: string; common?: true };

export function describeRoute(doc: OpenAPIObject, schemas: Record<string, unknown>, route: RestRoute): void {
  const operation = doc.paths?.[route.openapiPath]?.[lower(route.method)];
  if (!operation) throw new Error(`OpenAPI document lacks ${route.method} ${route.openapiPath}`);
  const access = accessOf(route);
  const mutation = route.type === 'mutation';

  operation.operationId = route.meta.openapi.operationId ?? route.procedurePath.replace('.', '_');
  operation.description = operationDescription(route, access);
  operation.security = access.authenticated ? [{ bearerAuth: [] }, mutation ? { cookieAuth: [], csrfToken: [] } : { cookieAuth: [] }, ...keyRequirement(route)] : [];
  const key = route.meta.apiKey;
  if (access.authenticated && key !== undefined && key !== 'unscoped') operation['x-api-key-scope'] = key;

  const parameters: Parameter[] = (operation.parameters ?? []).map((parameter) => described(parameter, route));
  if (route.rest.ifMatch) parameters.push(ref('parameters', 'IfMatch'));
  if (route.rest.idempotencyKey) parameters.push(ref('parameters', 'IdempotencyKey'));
  for (const cookie of route.rest.cookies?.reads ?? []) parameters.push(ref('parameters', cookie === 'session' ? 'SessionCookie' : 'RefreshTokenCookie'));
  if (parameters.length > 0) operation.parameters = parameters;
  else Reflect.deleteProperty(operation, 'parameters');

  nameRequestBody(operation, schemas, route);
  operation.responses = { ...successResponse(operation, route), ...errorResponses(route) };
}

/**
 * The API-key requirement of an operation open to keys (CONTRACT §3.5); none for the others. Its scope is not
 * listed in the requirement (OpenAPI tools read scopes there as OAuth2's), but in the description and in
 * `x-api-key-scope`.
 */
function keyRequirement(route: RestRoute): Record<string, string[]>[] {
  return route.meta.apiKey === undefined ? [] : [{ apiKeyAuth: [] }];
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
  const stream = route.rest.stream;
  if (stream) return { [status]: { description: `${description}: one \`${stream.item}\` per line`, headers, content: { [stream.mediaType]: { schema: ref('schemas', stream.item) } } } };

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
function outcomesOf(route: RestRoute): Outcome[] {
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
      { code: 1000, when: 'No credentials, or a missing, malformed, unknown or expired `session` cookie, bearer token or API key.', common: true },
      {
        code: 1002,
        when:
          'The session was ended: logged out, revoked, evicted, ended by a password change or user deletion, or its refresh token replayed; ' +
          'or the API key was revoked or its user deleted.',
        common: true,
      },
    );
    const key = route.meta.apiKey;
    if (key === undefined) outcomes.push({ code: 1001, when: 'Called with an API key: `not available to API keys`.' });
    else if (key !== 'unscoped') outcomes.push({ code: 1001, when: `Called with an API key without the scope \`${key}\`: \`the API key lacks the scope ${key}\`.` });
    if (access.roles) outcomes.push({ code: 1001, when: `The caller's role is not ${access.roles.map((r) => `\`${r}\``).join(', ')}.` });
    if (route.meta.allowPendingPasswordChange !== true) outcomes.push({ code: 1001, when: 'The user must change the initial password first (`password change required`).' });
    if (route.meta.allowPendingMfaEnrollment !== true) {
      outcomes.push({ code: 1001, when: "The user's role is in `MFA_REQUIRED_ROLES` and two-factor authentication is not on yet (`two-factor authentication required`)." });
    }
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
      (route.meta.allowPendingPasswordChange === true ? ' Also a user who must still change the initial password.' : '') +
      (route.meta.allowPendingMfaEnrollment === true ? ' Also a user whose role requires two-factor authentication before it is on.' : '');
    const csrf = route.type === 'mutation' ? ' With cookie authentication, send `X-CSRF-Token`.' : '';
    parts.push(`**Who:** ${who} (bearer token or \`session\` cookie).${pending}${csrf}`);
    parts.push(keyDescription(route.meta.apiKey));
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

function keyDescription(key: RestRoute['meta']['apiKey']): string {
  if (key === undefined) return '**API keys:** not accepted (403/1001 `not available to API keys`).';
  if (key === 'unscoped') return '**API keys:** accepted, whatever their scopes.';
  return `**API keys:** accepted with the scope \`${key}\`.`;
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
  // trpc-to-openapi rebuilds an input object that carries a refinement without its strictness (zod cannot omit
  // fields from a refined object); the server refuses unknown fields of it all the same.
  if (refusesUnknownFields(route) && !('additionalProperties' in schema)) schema.additionalProperties = false;
  schemas[name] = schema;
  const required = Array.isArray(schema.required) && schema.required.length > 0;
  operation.requestBody = { required, content: { 'application/json': { schema: ref('schemas', name) } } };
}

function refusesUnknownFields(route: RestRoute): boolean {
  const { inputParser } = getInputOutputParsers(route.procedure);
  return inputParser instanceof z.ZodObject && inputParser._zod.def.catchall instanceof z.ZodNever;
}

/** The id the input schema was registered with (e.g. `CreateUserRequest`), else `<Area><Name>Request`. */
function requestSchemaName(route: RestRoute): string {
  const id = route.inputId;
  if (id !== undefined) return id;
  return `${route.procedurePath.split('.').map(pascal).join('')}Request`;
}

/** trpc-to-openapi unwraps an optional parameter's schema, and the description given to the optional with it. */
function described(parameter: Parameter, route: RestRoute): Parameter {
  if ('$ref' in parameter || parameter.description !== undefined) return parameter;
  const description = route.inputShape?.[parameter.name]?.description;
  return description === undefined ? parameter : { ...parameter, description };
}

/** The document's tags: those the routes use, in order of first use, with their descriptions. */
export function tagsOf(routes: readonly RestRoute[]): NonNullable<OpenAPIObject['tags']> {
  return [...new Set(routes.flatMap((r) => r.meta.openapi.tags ?? []))].map((name) => {
    const description = TAG_DESCRIPTIONS[name];
    return description === undefined ? { name } : { name, description };
  });
}

function errorCodeOf(code: number): ErrorCode {
  const known = Object.keys(ERROR_CODES).map(Number).find((c): c is ErrorCode => c === code);
  if (known === undefined) throw new Error(`unknown error code ${code}`);
  return known;
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
