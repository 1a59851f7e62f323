// The document's shared prose as data: security schemes, headers, parameters, error responses and tag descriptions.
import { z } from 'zod';
import { ErrorDetailSchema, ProblemDetailSchema } from '../../errors.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../../services/idempotency/idempotency.ts';
import { Pagination } from '../../contracts/pagination.ts';
import { ref, type Components, type Header, type Parameter, type Response } from './nodes.ts';

const ErrorEnvelopeSchema = z
  .object({ data: z.null(), error: z.string(), error_detail: ErrorDetailSchema, success: z.literal(false) })
  .meta({ id: 'ErrorResponse' });

/** The zod schemas the document names although no procedure declares them: errors and the pagination block. */
export const SHARED_SCHEMAS = { ProblemDetail: ProblemDetailSchema, ErrorDetail: ErrorDetailSchema, ErrorResponse: ErrorEnvelopeSchema, Pagination };

export const SECURITY_SCHEMES = {
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
  apiKeyAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'aok_…',
    description:
      'An API key (`aok_` + 43 characters, from `POST /api-keys`, shown once) as `Authorization: Bearer <key>`, and only there: a key in a ' +
      'cookie or the query string is no credential. The request acts as the key\'s user with that user\'s current role, narrowed by the ' +
      'key\'s scopes; an operation that accepts keys says which scope it needs in its description and in `x-api-key-scope` (none: any key). ' +
      'Operations without this requirement answer a key with 403/1001. No CSRF token.',
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

export const HEADERS = {
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
export type HeaderName = keyof typeof HEADERS;

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

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 429 | 500 | 503;

export const ERROR_RESPONSES: Record<ErrorStatus, { name: string; description: string; headers: HeaderName[] }> = {
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

export const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] as const;

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

/** The shared headers, parameters and error responses, as `components` lists them. */
export function sharedComponents(): Pick<Components, 'headers' | 'parameters' | 'responses'> {
  return {
    headers: Object.fromEntries(Object.entries(HEADERS).filter(([name]) => !['Set-Cookie', 'Set-Cookie-Cleared'].includes(name))),
    parameters: PARAMETERS,
    responses: Object.fromEntries(Object.entries(ERROR_RESPONSES).map(([status, { name }]) => [name, errorResponseComponent(errorStatusOf(Number(status)))])),
  };
}

export function errorStatusOf(status: number): ErrorStatus {
  const known = ([400, 401, 403, 404, 409, 429, 500, 503] as const).find((s) => s === status);
  if (known === undefined) throw new Error(`no shared error response for status ${status}`);
  return known;
}

export const TAG_DESCRIPTIONS: Record<string, string> = {
  probes: 'Liveness, readiness and the capability report.',
  auth: 'First-run setup, login, sessions, refresh, password change and WebSocket tickets.',
  users: 'User administration: roles and organization roles.',
  setup: 'The first-run setup wizard: company, agents, name locales, personality presets.',
  approvals: 'Approval requests and their decisions.',
  reviews: 'Decisions on the review stages of a task.',
  'api-keys': 'API keys: the machine credentials of users and service accounts, scoped to what they may do.',
  audit: 'The audit log: who did what, when and from where; searchable and exportable (CEO and board members).',
  webhooks: "Outbound webhooks (the CEO's): events POSTed to the organization's other systems, signed per Standard Webhooks; their deliveries.",
};
