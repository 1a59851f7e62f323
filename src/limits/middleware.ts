// Applies CONTRACT §5 around one procedure call: global limit (5000), operation window (5001), in-flight cap (5002).
import type { Context } from '../context/index.ts';
import { ApiError } from '../errors.ts';
import type { RequestLimiter, Subject } from './limiter.ts';
import { subjectKey } from './limiter.ts';
import type { OperationId } from './policy.ts';

export type LimitedCall = {
  /** The procedure path, e.g. `probes.healthz`. */
  readonly path: string;
  /** `limits.op` from the procedure's meta. */
  readonly op: OperationId | undefined;
  /** Mutations fail closed when the limiter store is down; queries fail open. */
  readonly mutation: boolean;
};

type Headers = { readonly limit: number; readonly remaining: number; readonly resetSeconds: number };

// 8001 carries a retry hint; the store is the database, which readyz also asks clients to give 5 s.
const STORE_DOWN_RETRY_AFTER_S = 5;

/**
 * Runs `next` (the rest of the procedure) inside the limits that apply to `call`. Refusals are thrown as
 * ApiErrors before `next` runs; an in-flight slot is held until `next` settles, however it ends.
 */
export async function applyLimits<T>(ctx: Context, call: LimitedCall, next: () => Promise<T>): Promise<T> {
  const limiter = ctx.deps.limiter;
  if (limiter === null) return next();
  const release = await admit(ctx, limiter, call);
  if (release === null) return next();
  try {
    return await next();
  } finally {
    await release();
  }
}

type Release = () => Promise<void>;

async function admit(ctx: Context, limiter: RequestLimiter, call: LimitedCall): Promise<Release | null> {
  let held: Release | null = null;
  try {
    const ip: Subject = { kind: 'ip', id: ctx.ip };
    const user: Subject | null = ctx.actor ? { kind: 'user', id: ctx.actor.userId } : null;

    // (Procedures outside every limit use unlimitedProcedure and never get here.)
    const global = await limiter.global(user ?? ip);
    if (!global.allowed) {
      // The headers describe the bucket that refused, so a client can tell a flood guard from an operation's limit.
      sendHeaders(ctx, global);
      throw ApiError.rateLimited(5000, global.retryAfterSeconds);
    }
    if (call.op === undefined) return null;

    const op = limiter.operation(call.op);
    const key = subjectKey(op.policy.subject === 'user' && user ? user : ip);
    // The slot is taken before the window is counted, so a call refused with 5002 never spends a window slot.
    if (op.inflight) {
      const slot = await op.inflight.acquire(key);
      if (!slot.ok) {
        sendHeaders(ctx, await peekOrFull(ctx, op.window, key));
        throw ApiError.rateLimited(5002, slot.retryAfterSeconds);
      }
      held = releaser(ctx, slot.release, `${call.op}:${key}`);
    }
    const decision = await op.window.consume(key);
    sendHeaders(ctx, decision);
    if (!decision.allowed) {
      throw ApiError.rateLimited(5001, decision.retryAfterSeconds);
    }
    return held;
  } catch (error) {
    if (held) await held();
    if (error instanceof ApiError) throw error;
    // The store is unreachable. A mutation is refused rather than let through unlimited (password hashing
    // and roster rewrites are what the limits protect); a read goes on without limits.
    if (call.mutation) throw ApiError.unavailable(undefined, { retryAfter: STORE_DOWN_RETRY_AFTER_S, cause: error });
    ctx.deps.logger.warn({ err: error, reqId: ctx.requestId, procedure: call.path }, 'rate-limit store failed; read served without limits');
    return null;
  }
}

function releaser(ctx: Context, release: Release, key: string): Release {
  return async () => {
    try {
      await release();
    } catch (error) {
      // The call's own outcome stands; the slot frees itself when its TTL passes.
      ctx.deps.logger.warn({ err: error, reqId: ctx.requestId, key }, 'could not release an in-flight slot');
    }
  };
}

/** The window's room for the headers of a 5002; if the store cannot tell, the refusal still stands. */
async function peekOrFull(ctx: Context, window: { peek(key: string): Promise<Headers>; readonly limit: number }, key: string): Promise<Headers> {
  try {
    const room = await window.peek(key);
    return { ...room, resetSeconds: Math.max(1, room.resetSeconds) };
  } catch (error) {
    ctx.deps.logger.warn({ err: error, reqId: ctx.requestId }, 'rate-limit store failed while reading a window');
    return { limit: window.limit, remaining: 0, resetSeconds: 1 };
  }
}

function sendHeaders(ctx: Context, h: Headers): void {
  ctx.response.setHeader('RateLimit-Limit', String(h.limit));
  ctx.response.setHeader('RateLimit-Remaining', String(h.remaining));
  ctx.response.setHeader('RateLimit-Reset', String(h.resetSeconds));
}

/**
 * A request refused by authentication is anonymous, so it spends its IP's global budget (5000) like any
 * other anonymous call: a flood of bad or missing credentials ends in 429s, not in endless cheap 401s.
 * The store failing leaves the 401 as it is.
 */
export async function countFailedAuthentication(ctx: Context): Promise<void> {
  const limiter = ctx.deps.limiter;
  if (limiter === null) return;
  let decision: Awaited<ReturnType<RequestLimiter['global']>>;
  try {
    decision = await limiter.global({ kind: 'ip', id: ctx.ip });
  } catch (error) {
    ctx.deps.logger.warn({ err: error, reqId: ctx.requestId }, 'rate-limit store failed while counting a failed authentication');
    return;
  }
  if (!decision.allowed) {
    sendHeaders(ctx, decision);
    throw ApiError.rateLimited(5000, decision.retryAfterSeconds);
  }
}
