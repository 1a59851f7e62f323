// ApiError, the one table of error codes (status, category, title), and the one ProblemDetail builder.
import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { ConnectionException, DriverException } from '@mikro-orm/core';
import { z } from 'zod';

export const ERROR_CATEGORIES = {
  auth: 'Authentication Error',
  validation: 'Validation Error',
  not_found: 'Resource Not Found',
  conflict: 'Resource Conflict',
  rate_limit: 'Rate Limit Exceeded',
  budget_exhausted: 'Budget Exhausted',
  provider_error: 'Provider Error',
  internal: 'Internal Server Error',
} as const;
export type ErrorCategory = keyof typeof ERROR_CATEGORIES;

type CodeInfo = {
  name: string;
  category: ErrorCategory;
  status: number;
  /** Another status the code is sent with (2001 is 405 for a wrong method). */
  alsoStatus?: number;
  retryable: boolean;
  /** When the service sends it, for the error page at /docs/errors. */
  when: string;
  /** 5xx answers never echo the real failure (SERVICE-SPEC §7.5.3). */
  genericDetail?: string;
};

export const ERROR_CODES = {
  1000: {
    name: 'UNAUTHORIZED',
    category: 'auth',
    status: 401,
    retryable: false,
    when:
      'No credentials, or credentials that are malformed, unknown or expired: the `session` cookie or bearer token, an access token ' +
      'replaced by a refresh, a missing, unknown or expired refresh token; a wrong username or password at login (the same answer for both); ' +
      'at login with the right password of a user who has two-factor authentication on, no one-time code ("one-time code required") or a ' +
      'wrong or used one ("invalid one-time code").',
  },
  1001: {
    name: 'FORBIDDEN',
    category: 'auth',
    status: 403,
    retryable: false,
    when:
      'Signed in but not allowed: the role does not permit the operation (e.g. user administration and setup changes are for the CEO, ' +
      '`scope=all` on sessions too); a cookie-authenticated POST, PUT, PATCH or DELETE without an `X-CSRF-Token` equal to the `csrf_token` ' +
      'cookie; a user who must change the initial password calling anything but `GET /auth/me`, `POST /auth/change-password` or ' +
      '`POST /auth/logout` ("password change required"); a user whose role is in `MFA_REQUIRED_ROLES` without two-factor authentication ' +
      'on calling anything but those and `GET /auth/mfa` and the operations under `/auth/mfa/` ("two-factor authentication required"); ' +
      'deciding (approving or rejecting) one\'s own approval request.',
  },
  1002: {
    name: 'SESSION_REVOKED',
    category: 'auth',
    status: 401,
    retryable: false,
    when:
      'The token belongs to a session that was ended: logged out, revoked through `DELETE /auth/sessions/{session_id}`, ended by a password ' +
      'change in another session or by deleting the user, evicted by a newer login beyond the per-user session cap, or killed because a ' +
      'used refresh token was presented again. Sign in again.',
  },
  2000: {
    name: 'VALIDATION_ERROR',
    category: 'validation',
    status: 400,
    retryable: false,
    when:
      'Well-formed input that breaks a business rule: an unknown template, model provider, model or personality preset, a bad or repeated ' +
      'locale code, a password that is only whitespace, equals the username or repeats the current one, a wrong current password, setup ' +
      'that cannot complete yet, org-role department rules, a wrong one-time code or password when turning two-factor authentication on ' +
      'or off or renewing recovery codes ("invalid one-time code").',
  },
  2001: {
    name: 'REQUEST_VALIDATION_ERROR',
    category: 'validation',
    status: 400,
    alsoStatus: 405,
    retryable: false,
    when:
      'The request\'s shape is wrong (the detail names the field, e.g. `body.password`, `query.limit`, `path.user_id`): a field fails its ' +
      'schema, an unknown field, malformed JSON, a body that is not a JSON object (`null` included), a body over 1 MiB, a media type other ' +
      'than `application/json`, a bad or tampered cursor, a query parameter given twice, a path parameter over 128 characters, text the ' +
      'database cannot store (a NUL character or a lone surrogate, in any value or key) or a `__proto__` / `constructor.prototype` key. ' +
      'With status 405 and an `Allow` header: a method the path does not support.',
  },
  3000: {
    name: 'RESOURCE_NOT_FOUND',
    category: 'not_found',
    status: 404,
    retryable: false,
    when:
      'The resource the path names does not exist: a user, an approval, a session (also someone else\'s, unless you are the CEO), an org ' +
      'role the user does not hold, a setup agent index out of range.',
  },
  3001: {
    name: 'RECORD_NOT_FOUND',
    category: 'not_found',
    status: 404,
    retryable: false,
    when: 'Defined by the error taxonomy; this service does not send it (a missing resource is 3000).',
  },
  3002: {
    name: 'ROUTE_NOT_FOUND',
    category: 'not_found',
    status: 404,
    retryable: false,
    when: 'No endpoint at this path under `/api/v1`, or no procedure of this name at `/api/trpc`.',
  },
  4000: {
    name: 'RESOURCE_CONFLICT',
    category: 'conflict',
    status: 409,
    retryable: false,
    when:
      'The current state forbids it: first-run setup already done (or, at login, not done yet), the setup wizard already complete, an ' +
      'approval no longer pending, a second CEO or changing the CEO\'s role, deleting yourself, the CEO or the last owner, a company ' +
      'without a template while agents exist, the agent cap, too many unredeemed WebSocket tickets, two-factor authentication already on ' +
      '(enrolling, confirming) or not on (confirming with nothing pending, turning it off, renewing recovery codes, the CEO\'s reset).',
  },
  4001: {
    name: 'DUPLICATE_RECORD',
    category: 'conflict',
    status: 409,
    retryable: false,
    when: 'It already exists: a username that is taken (compared case-insensitively), an org role the user already holds, a review stage already decided.',
  },
  4002: {
    name: 'VERSION_CONFLICT',
    category: 'conflict',
    status: 409,
    retryable: false,
    when: '`If-Match` does not match the resource\'s current `ETag`: someone changed it since you read it. Read it again and retry.',
  },
  5000: {
    name: 'RATE_LIMITED',
    category: 'rate_limit',
    status: 429,
    retryable: true,
    when: 'Too many requests from this user (or, signed out, this IP address) in the current minute: the global limit.',
  },
  5001: {
    name: 'PER_OPERATION_RATE_LIMITED',
    category: 'rate_limit',
    status: 429,
    retryable: true,
    when: 'The operation\'s own sliding-window limit is used up, or login is throttled after repeated failures for this username and IP.',
  },
  5002: {
    name: 'CONCURRENCY_LIMIT_EXCEEDED',
    category: 'rate_limit',
    status: 429,
    retryable: true,
    when: 'A previous request of the same operation by the same user (or IP) is still running; retry after 1 second.',
  },
  6000: {
    name: 'BUDGET_EXHAUSTED',
    category: 'budget_exhausted',
    status: 402,
    retryable: false,
    when: 'Defined by the error taxonomy for budget limits; this version of the service does not send it.',
  },
  7000: {
    name: 'PROVIDER_ERROR',
    category: 'provider_error',
    status: 502,
    retryable: false,
    when: 'Defined by the error taxonomy for upstream model provider failures; this version of the service does not send it.',
  },
  8000: {
    name: 'INTERNAL_ERROR',
    category: 'internal',
    status: 500,
    retryable: false,
    when: 'An unexpected failure. The detail is a generic sentence; the real error is logged under the `instance` id: quote it when reporting.',
    genericDetail: 'An unexpected error occurred. Quote the instance id when reporting it.',
  },
  8001: {
    name: 'SERVICE_UNAVAILABLE',
    category: 'internal',
    status: 503,
    retryable: true,
    when: 'The database is unreachable or overloaded, or a required dependency is down; `GET /readyz` names the dependency. Retry later.',
    genericDetail: 'A required service is unavailable. Retry later.',
  },
  8002: {
    name: 'PERSISTENCE_ERROR',
    category: 'internal',
    status: 500,
    retryable: false,
    when: 'A database error other than unavailability. The detail is generic; the real error is logged under the `instance` id.',
    genericDetail: 'A storage error occurred. Quote the instance id when reporting it.',
  },
} as const satisfies Record<number, CodeInfo>;
export type ErrorCode = keyof typeof ERROR_CODES;

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  408: 'TIMEOUT',
  409: 'CONFLICT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
};

/**
 * The error every layer throws. It is a TRPCError so tRPC keeps it intact and its own HTTP status
 * mapping (for /api/trpc) agrees with ours.
 */
export class ApiError extends TRPCError {
  readonly errorCode: ErrorCode;
  readonly detail: string;
  readonly retryAfter: number | null;
  /** The HTTP status; the code's own unless a code spans several (2001 is also 405, 408, 414 and 431). */
  readonly status: number;

  constructor(errorCode: ErrorCode, detail: string, opts: { retryAfter?: number; cause?: unknown; status?: 405 | 408 | 414 | 431 } = {}) {
    const info: CodeInfo = ERROR_CODES[errorCode];
    const status = opts.status ?? info.status;
    super({ code: TRPC_CODE_BY_STATUS[status] ?? 'INTERNAL_SERVER_ERROR', message: detail, cause: opts.cause });
    this.errorCode = errorCode;
    this.detail = detail;
    this.status = status;
    this.retryAfter = info.retryable && opts.retryAfter !== undefined ? Math.max(1, Math.ceil(opts.retryAfter)) : null;
  }

  static methodNotAllowed(detail: string) {
    return new ApiError(2001, detail, { status: 405 });
  }

  static unauthorized(detail = 'authentication required') {
    return new ApiError(1000, detail);
  }
  static forbidden(detail = 'insufficient permissions') {
    return new ApiError(1001, detail);
  }
  static sessionRevoked(detail = 'session logged out or force-revoked') {
    return new ApiError(1002, detail);
  }
  static validation(detail: string) {
    return new ApiError(2000, detail);
  }
  static badRequest(detail: string) {
    return new ApiError(2001, detail);
  }
  static notFound(detail = 'resource not found') {
    return new ApiError(3000, detail);
  }
  static routeNotFound(detail = 'no such endpoint') {
    return new ApiError(3002, detail);
  }
  static conflict(detail: string) {
    return new ApiError(4000, detail);
  }
  static duplicate(detail: string) {
    return new ApiError(4001, detail);
  }
  static versionConflict(detail = 'If-Match does not match the current ETag') {
    return new ApiError(4002, detail);
  }
  static rateLimited(code: 5000 | 5001 | 5002, retryAfter: number, detail?: string) {
    const defaults = {
      5000: 'too many requests',
      5001: 'too many requests for this operation',
      5002: 'a previous request of this operation is still in flight',
    } as const;
    return new ApiError(code, detail ?? defaults[code], { retryAfter });
  }
  static internal(cause?: unknown) {
    return new ApiError(8000, ERROR_CODES[8000].genericDetail, { cause });
  }
  static unavailable(detail: string = ERROR_CODES[8001].genericDetail, opts: { retryAfter?: number; cause?: unknown } = {}) {
    return new ApiError(8001, detail, opts);
  }
  static persistence(cause?: unknown) {
    return new ApiError(8002, ERROR_CODES[8002].genericDetail, { cause });
  }
}

export const ErrorDetailSchema = z
  .object({
    type: z.url().describe('`{PUBLIC_URL}/docs/errors#{error_category}`: the page that explains the category and its codes.'),
    title: z.string().describe('The title of the category.'),
    detail: z.string().describe('What went wrong; for 5xx a fixed sentence per code.'),
    instance: z.string().describe('The request id, also sent as `X-Request-Id`; quote it when reporting a problem.'),
    error_code: z.literal(Object.keys(ERROR_CODES).map(Number)).describe('The code; each is explained at /docs/errors.').meta({ type: 'integer' }),
    error_category: z.enum(Object.keys(ERROR_CATEGORIES) as [ErrorCategory, ...ErrorCategory[]]),
    retryable: z.boolean().describe('Whether retrying the same request may succeed (5000, 5001, 5002, 8001).'),
    retry_after: z.int().min(1).nullable().describe('Seconds to wait before retrying (also `Retry-After`); null unless retryable.'),
  })
  .meta({ id: 'ErrorDetail' });
export type ErrorDetail = z.infer<typeof ErrorDetailSchema>;

export const ProblemDetailSchema = ErrorDetailSchema.extend({ status: z.int().min(400).max(599).describe('The HTTP status.') }).meta({ id: 'ProblemDetail' });
export type ProblemDetail = z.infer<typeof ProblemDetailSchema>;

/** Names each failing field the way a client sent it, e.g. `body.password: too short (min 12)`. */
export function describeZodError(error: z.ZodError, locate: (path: readonly PropertyKey[]) => string = defaultLocate): string {
  const parts = error.issues.slice(0, 10).map((issue) => `${locate(issue.path)}: ${describeIssue(issue)}`);
  if (error.issues.length > 10) parts.push(`and ${error.issues.length - 10} more`);
  return parts.join('; ');
}

function defaultLocate(path: readonly PropertyKey[]): string {
  return path.length === 0 ? 'input' : path.map(String).join('.');
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      // zod 4 omits issue.input unless reportInput is on; its message still says what it received.
      return issue.message.endsWith('received undefined') ? 'is required' : `must be ${issue.expected}`;
    case 'too_small':
      if (issue.origin === 'string') return `too short (min ${String(issue.minimum)})`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at least ${String(issue.minimum)} items`;
      return `must be >= ${String(issue.minimum)}`;
    case 'too_big':
      if (issue.origin === 'string') return `too long (max ${String(issue.maximum)})`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at most ${String(issue.maximum)} items`;
      return `must be <= ${String(issue.maximum)}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => String(v)).join(', ')}`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
    case 'invalid_format':
      // Custom messages are ours; built-in ones would dump the regex.
      return issue.message.startsWith('Invalid') ? `has an invalid format (${issue.format})` : issue.message;
    case 'invalid_union':
      return 'does not match any allowed shape';
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    default:
      return issue.message;
  }
}

/** Maps anything thrown anywhere to an ApiError; the one place that decides unknown → 8000/8001/8002/4001. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof TRPCError) {
    if (error.cause instanceof ApiError) return error.cause;
    if (error.cause instanceof z.ZodError) {
      if (error.code === 'BAD_REQUEST') return ApiError.badRequest(describeZodError(error.cause));
      // A failing output schema is our bug, never the client's.
      return ApiError.internal(error);
    }
    if (error.cause !== undefined && error.cause !== error) {
      const inner = toApiError(error.cause);
      if (inner.errorCode !== 8000) return inner;
    }
    switch (error.code) {
      case 'NOT_FOUND':
        return ApiError.routeNotFound();
      case 'METHOD_NOT_SUPPORTED':
        return ApiError.methodNotAllowed('method not allowed');
      case 'PARSE_ERROR':
      case 'BAD_REQUEST':
        return ApiError.badRequest(error.message);
      case 'PAYLOAD_TOO_LARGE':
        return ApiError.badRequest('request body too large (max 1 MiB)');
      case 'UNSUPPORTED_MEDIA_TYPE':
        return ApiError.badRequest('unsupported content type; send application/json');
      default:
        return ApiError.internal(error);
    }
  }
  if (error instanceof z.ZodError) return ApiError.badRequest(describeZodError(error));
  const database = databaseErrorOf(error);
  if (database) return database;
  return ApiError.internal(error);
}

/**
 * Unique constraints and the conflict each one means to a client: the one place a unique violation
 * becomes an ApiError (stores never check-then-insert; the database decides, CONTRACT §2.2).
 */
export const UNIQUE_VIOLATIONS: Readonly<Record<string, () => ApiError>> = {
  users_username_key_unique: () => ApiError.duplicate('username is already taken'),
  users_username_skeleton_unique: () => ApiError.duplicate('username is already taken (an existing name looks the same)'),
  users_one_ceo: () => ApiError.conflict('there is already a CEO'),
  user_org_roles_pkey: () => ApiError.duplicate('the user already holds this org role'),
  stage_decisions_task_stage_unique: () => ApiError.duplicate('this stage has already been decided'),
};

// SQLSTATEs that mean "no usable connection / the server went away or is overloaded" → 503/8001.
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '57014']);
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

/**
 * Database failures: unique violations through UNIQUE_VIOLATIONS, lost connections and timeouts as
 * 503/8001, any other driver error as 8002. Undefined when the error is not the database's.
 */
function databaseErrorOf(error: unknown): ApiError | undefined {
  // Overload and outages pass: a client may retry in a second (CONTRACT §2.2).
  if (isConnectionFailure(error)) return ApiError.unavailable(undefined, { cause: error, retryAfter: 1 });
  const fields = pgFieldsOf(error);
  if (!fields) return undefined;
  if (fields.sqlState === '23505') {
    const mapped = fields.constraint !== undefined ? UNIQUE_VIOLATIONS[fields.constraint] : undefined;
    return mapped?.() ?? ApiError.duplicate('resource already exists');
  }
  if (UNAVAILABLE_SQLSTATES.has(fields.sqlState) || fields.sqlState.startsWith('08')) return ApiError.unavailable(undefined, { cause: error, retryAfter: 1 });
  // A prepared statement goes out under a new name on its next call (db/prepared.ts): a retry succeeds.
  if (isStalePlan(error)) return ApiError.unavailable(undefined, { cause: error, retryAfter: 1 });
  return ApiError.persistence(error);
}

/**
 * PostgreSQL's refusal to run a prepared plan whose result columns changed since it was prepared: a
 * migration changed what the statement returns (a column added under `users.*`, say) while this instance
 * ran. It refuses before running anything, on every connection that has the plan.
 */
export function isStalePlan(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if ('code' in e && e.code === '0A000' && /cached plan must not change result type/.test(e.message)) return true;
  }
  return false;
}

/** The SQLSTATE of a database error (in its cause chain, as the driver or the ORM reports it), if it is one. */
export function sqlStateOf(error: unknown): string | undefined {
  return pgFieldsOf(error)?.sqlState || undefined;
}

function pgFieldsOf(error: unknown): { sqlState: string; constraint: string | undefined } | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    // The pg driver (under Kysely) puts the SQLSTATE in `code`; the ORM's wrapper copies it and adds `sqlState`.
    const sqlState = 'sqlState' in e && typeof e.sqlState === 'string' ? e.sqlState : 'code' in e ? e.code : undefined;
    if (typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState)) {
      const constraint = 'constraint' in e && typeof e.constraint === 'string' ? e.constraint : undefined;
      return { sqlState, constraint };
    }
    if (e instanceof DriverException) return { sqlState: '', constraint: undefined };
  }
  return undefined;
}

function isConnectionFailure(error: unknown): boolean {
  if (error instanceof ConnectionException) return true;
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = 'code' in e ? e.code : undefined;
    if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
    // A Unix-domain socket whose server is down (the embedded one restarting) is missing, not refusing.
    if (code === 'ENOENT' && 'syscall' in e && e.syscall === 'connect') return true;
    if (/Connection terminated|connection timeout|terminating connection|timeout exceeded when trying to connect|Query read timeout/i.test(e.message)) return true;
  }
  return false;
}

export type ProblemOptions = { instance: string; publicUrl: string };

/** The one builder of every error body the service sends. */
export function toProblem(error: ApiError, opts: ProblemOptions): ProblemDetail {
  const info: CodeInfo = ERROR_CODES[error.errorCode];
  return {
    type: `${opts.publicUrl}/docs/errors#${info.category}`,
    title: ERROR_CATEGORIES[info.category],
    status: error.status,
    detail: info.genericDetail !== undefined && error.errorCode !== 8001 ? info.genericDetail : error.detail,
    instance: opts.instance,
    error_code: error.errorCode,
    error_category: info.category,
    retryable: info.retryable,
    retry_after: info.retryable ? (error.retryAfter ?? (error.errorCode === 8001 ? null : 1)) : null,
  };
}

/** The envelope form of an error (SERVICE-SPEC §7.1). */
export function toErrorEnvelope(problem: ProblemDetail) {
  const { status: _status, ...detail } = problem;
  return { data: null, error: problem.detail, error_detail: detail, success: false as const };
}
