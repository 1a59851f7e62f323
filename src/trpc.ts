// The only initTRPC call: the meta type, the error shape, and the procedure tiers every router builds on.
import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';
import type { Context } from './context/index.ts';
import { ApiError, toApiError, toProblem, type ErrorCode } from './errors.ts';
import { assertAcceptableInput } from './inputRules.ts';
import { countSentError } from './metrics/registry.ts';
import { resolveApiKey } from './services/apiKeys/resolve.ts';
import { authenticate, requireMfaEnrolled, requirePasswordChanged, requireRole, requireScope, type KeyAccess, type Resolvers, type Role } from './services/auth/guards.ts';
import { resolveSession } from './services/auth/sessions.ts';
import { applyLimits, countFailedAuthentication } from './limits/middleware.ts';
import { withOrigin, type Origin } from './services/audit/origin.ts';
import type { Actor } from './contracts/actor.ts';
import type { OperationId } from './limits/policy.ts';

export type RestMeta = {
  /** Success status of the REST route (default 200). */
  status?: 200 | 201 | 202 | 204;
  /** The procedure returns `{ items, pagination }`, served as a PaginatedResponse. */
  list?: boolean;
  /** `Location` header of a create, e.g. `/api/v1/users/{id}` filled from the returned data. */
  location?: `/${string}`;
  /** Sends a strong ETag computed from the returned data (CONTRACT §2.1). */
  etag?: boolean;
  /** Honours `If-Match` with the resource's ETag: a stale one is 409/4002 (CONTRACT §2.1). */
  ifMatch?: boolean;
  /** Accepts an `Idempotency-Key` header: a repeat is answered from the first call (CONTRACT §2.5). */
  idempotencyKey?: boolean;
  /**
   * The body is streamed in this media type (GET /audit/export): the procedure returns a StreamBody, which the
   * REST facade runs with the reply as its sink. `item` names the component schema of each line or record.
   */
  stream?: { mediaType: 'application/x-ndjson'; item: string };
  /**
   * The procedure may hold its answer (a wait, CONTRACT §4.11): the REST facade hands it a `signal` that aborts
   * when the client disconnects, as tRPC's own adapter does for every call.
   */
  abortOnDisconnect?: boolean;
  /**
   * Cookies the operation handles itself (CONTRACT §3.2, §3.3): those it reads beyond authentication
   * (refresh and logout work from cookies alone), and whether it issues the three session cookies or clears them.
   */
  cookies?: { reads?: readonly ('session' | 'refresh_token')[]; writes?: 'issue' | 'clear' };
};

/**
 * What a procedure's tier implies for every call, stamped into its meta by the tier itself (a router never
 * sets it), so the OpenAPI document derives statuses and security from the same values that enforce them.
 */
export type Access = {
  tier: 'unlimited' | 'public' | 'authed' | 'ceo' | 'approver' | 'writer' | 'auditor';
  /** A signed-in user is required (session cookie or bearer token, or an API key where the meta opens the operation to keys). */
  authenticated: boolean;
  /** The roles allowed; absent: any signed-in user (or anyone, when not authenticated). */
  roles?: readonly Role[];
  /** The global per-subject limit (5000) applies. */
  limited: boolean;
};

export type Meta = OpenApiMeta<{
  /** Set by the procedure tiers below. */
  access?: Access;
  rest?: RestMeta;
  limits?: { op: OperationId };
  /** Callable by a user who still has to change the initial password (CONTRACT §3.1). */
  allowPendingPasswordChange?: boolean;
  /**
   * Callable by a user whose role is in MFA_REQUIRED_ROLES before turning two-factor authentication on
   * (CONTRACT §3.6): `me`, password change and the user's own two-factor operations, so that they can enroll.
   */
  allowPendingMfaEnrollment?: boolean;
  /**
   * Whether API keys may call it (CONTRACT §3.5): the scope a key needs, or `unscoped` (any key). Absent: no key
   * may, 403/1001 `not available to API keys`. Read only by authenticated tiers; keys are no credential elsewhere.
   */
  apiKey?: KeyAccess;
  /**
   * The procedure reads nothing from its input, and whatever a client sends is ignored rather than
   * checked (logout: a broken body must never keep a session alive, CONTRACT §3.3).
   */
  ignoresInput?: boolean;
  /**
   * The errors this operation adds to those its tier, input, limits and `rest` meta already imply
   * (OpenAPI responses): error code → when the operation sends it.
   */
  errors?: Partial<Record<ErrorCode, string>>;
}>;

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    errorFormatter({ shape, error, ctx }) {
      const apiError = toApiError(error);
      const problem = toProblem(apiError, {
        instance: ctx?.requestId ?? 'unknown',
        publicUrl: ctx?.deps.config.publicUrl ?? '',
      });
      // Every error a tRPC call answers with passes here, each call of a batch on its own.
      if (ctx) countSentError(ctx.deps.metrics, apiError, shape.data.path ?? 'trpc.unknown');
      // The dashboard sees the same ProblemDetail the REST facade sends; nothing else leaks.
      return { message: problem.detail, code: shape.code, data: { code: shape.data.code, httpStatus: problem.status, path: shape.data.path, problem } };
    },
  });

export const router = t.router;
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;

/**
 * Failures that are not the API's own (a driver error a store let through, an unexpected throw) become
 * ApiErrors here, so createCaller sees the same error the transports send instead of the raw text.
 * Input errors stay as tRPC raised them: the REST facade names their fields where they were sent.
 */
function apiErrorsOf<R extends { ok: boolean; error?: TRPCError }>(result: R): R {
  if (!result.ok) {
    const cause = result.error?.cause;
    if (result.error && cause !== undefined && !(cause instanceof TRPCError) && !(cause instanceof z.ZodError)) throw toApiError(result.error);
  }
  return result;
}

/** A throw before the procedure ran: wrapped as tRPC wraps a middleware's throw, then mapped as above. */
function apiErrorOf(error: unknown): unknown {
  if (error instanceof ApiError) return error;
  const wrapped = error instanceof TRPCError ? error : new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: error });
  const cause = wrapped.cause;
  return cause !== undefined && !(cause instanceof TRPCError) && !(cause instanceof z.ZodError) ? toApiError(wrapped) : wrapped;
}

/**
 * The last step of every tier, so who may call is settled before what was sent is looked at (CONTRACT
 * §2.2: an anonymous bad body is 401, a wrong role's 403). It reads the raw input — which is also when the
 * REST facade parses the body — and applies the rules no schema states (inputRules.ts), after refusing an
 * input the transport could not decode from the URL; the procedure's own schema runs right after.
 */
async function checkInput(ctx: Context, meta: Meta | undefined, getRawInput: () => Promise<unknown>): Promise<void> {
  if (meta?.ignoresInput === true) return;
  if (ctx.undecodableInput !== null) throw ApiError.badRequest(ctx.undecodableInput);
  assertAcceptableInput(await getRawInput());
}

/**
 * Where the changes a call makes come from, for their audit entries (CONTRACT §4.13): the request and its
 * client, and the credential; a call without one (a login, first-run setup) is a user's all the same.
 */
function originOf(ctx: Context, actor: Actor | null): Origin {
  return { actorType: actor?.via === 'api_key' ? 'api_key' : 'user', apiKeyId: actor?.apiKey?.id ?? null, ip: ctx.ip, requestId: ctx.requestId };
}

/*
 * Each tier (but the unlimited one, which needs none) is ONE middleware: error mapping, authentication,
 * limits (wrapping the rest of the call, not just its start, because the in-flight cap holds its slot until
 * it ends), the role check and the input rules, in that order. tRPC copies a call's options twice per
 * middleware level (object spreads), a share of a cheap request's CPU that shows in profiles
 * (docs/foundation.md#measured-reasons-behind-the-code); one level per tier keeps the order of the
 * checks and their errors as they were.
 */
const anonymousTier = t.middleware(async ({ ctx, meta, path, type, getRawInput, next }) => {
  try {
    const result = await applyLimits(ctx, { path, op: meta?.limits?.op, mutation: type === 'mutation' }, async () => {
      await checkInput(ctx, meta, getRawInput);
      return withOrigin(originOf(ctx, null), () => next());
    });
    return apiErrorsOf(result);
  } catch (error) {
    throw apiErrorOf(error);
  }
});

/** A signed-in user (cookie or bearer), before the input is looked at. CSRF applies to cookie-authenticated mutations. */
const signedInTier = (roles: readonly Role[] | null) =>
  t.middleware(async ({ ctx, type, meta, path, getRawInput, next }) => {
    try {
      // ctx.em is read only when a credential is there to resolve: requests without one never fork an EntityManager.
      const resolve: Resolvers = {
        session: (token) => resolveSession({ em: ctx.em, clock: ctx.deps.clock, config: ctx.deps.config }, token),
        apiKey: (key) => resolveApiKey({ em: ctx.em, clock: ctx.deps.clock }, key),
      };
      const actor = await authenticate(ctx.credentials, resolve, { mutation: type === 'mutation', secret: ctx.deps.secret }).catch(async (error: unknown) => {
        if (error instanceof ApiError && error.status === 401) await countFailedAuthentication(ctx);
        throw error;
      });
      ctx.trace.userId = actor.userId;
      // A key's scope comes first (CONTRACT §3.5): before the role check and before anything is looked up.
      requireScope(actor, meta?.apiKey);
      requirePasswordChanged(actor, meta?.allowPendingPasswordChange === true);
      requireMfaEnrolled(actor, ctx.deps.config.mfaRequiredRoles, meta?.allowPendingMfaEnrollment === true);
      // tRPC merges `{ actor }` into the context it passes on: the same object as `signedIn`.
      const signedIn = { ...ctx, actor };
      const result = await applyLimits(signedIn, { path, op: meta?.limits?.op, mutation: type === 'mutation' }, async () => {
        if (roles) requireRole(actor, roles);
        await checkInput(ctx, meta, getRawInput);
        return withOrigin(originOf(ctx, actor), () => next({ ctx: { actor } }));
      });
      return apiErrorsOf(result);
    } catch (error) {
      throw apiErrorOf(error);
    }
  });

/** Anyone; per-operation limits from meta apply, keyed by client IP. */
export const publicProcedure = t.procedure.meta({ access: { tier: 'public', authenticated: false, limited: true } }).use(anonymousTier);

/**
 * Anyone, outside every rate limit: the probes and setup status, which SERVICE-SPEC gives no 429 and
 * orchestrators poll at any rate. It has no middleware at all, because each level of one costs two copies
 * of the call's options inside tRPC, which shows on a request as cheap as a probe
 * (docs/foundation.md#measured-reasons-behind-the-code), and there is nothing for it to do: these
 * procedures take no input (a test holds every unlimited route to that), so no input rule
 * applies, and their failures are ApiErrors or, unexpected, mapped by each transport as any other. Only
 * createCaller sees such an unexpected one as tRPC's INTERNAL_SERVER_ERROR wrapping it.
 */
export const unlimitedProcedure = t.procedure.meta({ access: { tier: 'unlimited', authenticated: false, limited: false } });

/** A signed-in user (cookie or bearer); `ctx.actor` is non-null. */
export const authedProcedure = t.procedure.meta({ access: { tier: 'authed', authenticated: true, limited: true } }).use(signedInTier(null));

const roleProcedure = (tier: Access['tier'], roles: readonly Role[]) =>
  t.procedure.meta({ access: { tier, authenticated: true, roles, limited: true } }).use(signedInTier(roles));

/** The CEO only: user administration and every setup mutation. */
export const ceoProcedure = roleProcedure('ceo', ['ceo']);
/** Those who decide approvals. */
export const approverProcedure = roleProcedure('approver', ['ceo', 'manager', 'board_member']);
/** Those who create approvals and decide review stages. */
export const writerProcedure = roleProcedure('writer', ['ceo', 'manager', 'pair_programmer']);
/** Those who read the audit log (CONTRACT §4.13). */
export const auditorProcedure = roleProcedure('auditor', ['ceo', 'board_member']);

/**
 * What a procedure with `rest.stream` returns: a producer that writes the body through `write`, which
 * resolves when the client can take more and rejects once it is gone. Until its first write (or its end) it
 * may still fail with an ordinary error response.
 */
export type StreamBody = (write: (chunk: string | Uint8Array) => Promise<void>) => Promise<void>;
