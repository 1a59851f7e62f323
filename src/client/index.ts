// The typed tRPC client for TypeScript frontends (CONTRACT §4.7): batching, CSRF header, subscriptions, one session refresh.
import {
  createTRPCClient,
  httpBatchLink,
  httpLink,
  httpSubscriptionLink,
  splitLink,
  TRPCClientError,
  type Operation,
  type TRPCClient,
  type TRPCLink,
} from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../routers/index.ts';
import { refreshOnceLink, type SessionLost } from './refreshOnce.ts';

export type { AppRouter, SessionLost };
export type AgentOrgClient = TRPCClient<AppRouter>;
export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type ClientError = TRPCClientError<AppRouter>;
/** The ProblemDetail every failed call carries in `error.data.problem` (CONTRACT §2.2). */
export type Problem = NonNullable<ClientError['data']>['problem'];

export const CSRF_COOKIE = 'csrf_token';
export const CSRF_HEADER = 'X-CSRF-Token';
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

declare module '@trpc/client' {
  interface OperationContext {
    /**
     * Sent as `Idempotency-Key` (CONTRACT §2.5). The key names one HTTP request, so such a call is
     * sent alone, never inside a batch.
     */
    idempotencyKey?: string;
  }
}

export type ClientOptions = {
  /** Where tRPC is served; default `/api/trpc` on the page's own origin. */
  url?: string;
  /** Reads a cookie by name; default: `document.cookie`. */
  readCookie?: (name: string) => string | undefined;
  /**
   * Turns on the session refresh: a call refused for want of a live session (401) triggers one
   * `auth.refresh` and is retried once; when that fails too, this is called (e.g. to show the login page).
   * The tabs of one browser refresh one at a time (Web Locks) and reuse each other's result.
   */
  onSessionLost?: SessionLost;
  /** Longest URL of a batched GET; longer batches are split (default 4096). */
  maxURLLength?: number;
  /**
   * A program's API key (`aok_…`, CONTRACT §3.5), sent as `Authorization: Bearer <key>` with every query and
   * mutation; no cookie or CSRF token is needed then. Subscriptions go through the runtime's EventSource, which
   * cannot send that header: a program follows events over the WebSocket instead (a ticket from `auth.wsTicket`).
   */
  apiKey?: string;
};

export function createClient(options: ClientOptions = {}): AgentOrgClient {
  const transport = transportLink(options);
  const links: TRPCLink<AppRouter>[] = [transport];
  const { onSessionLost } = options;
  if (onSessionLost) {
    // The refresh goes through the transport alone, so a failed refresh is never itself refreshed.
    const bare = createTRPCClient<AppRouter>({ links: [transport] });
    // Every refresh sets a new csrf_token cookie (it is bound to the access token), so the other tabs see it move.
    const readCookie = options.readCookie ?? documentCookie;
    links.unshift(refreshOnceLink({ refresh: () => bare.auth.refresh.mutate(), onSessionLost, sessionMarker: () => readCookie(CSRF_COOKIE) }));
  }
  return createTRPCClient<AppRouter>({ links });
}

/**
 * Subscriptions over Server-Sent Events; calls with an idempotency key alone; everything else
 * batched. Cookies go with every request; mutations echo the `csrf_token` cookie in `X-CSRF-Token`
 * (double submit, CONTRACT §3.2).
 */
function transportLink(options: ClientOptions): TRPCLink<AppRouter> {
  const url = options.url ?? '/api/trpc';
  const readCookie = options.readCookie ?? documentCookie;
  const authorization: Record<string, string> = options.apiKey === undefined ? {} : { Authorization: `Bearer ${options.apiKey}` };
  const csrfHeaders = (ops: readonly Operation[]): Record<string, string> => {
    const token = ops.some((op) => op.type === 'mutation') ? readCookie(CSRF_COOKIE) : undefined;
    return token === undefined ? authorization : { ...authorization, [CSRF_HEADER]: token };
  };
  return splitLink({
    condition: (op) => op.type === 'subscription',
    true: httpSubscriptionLink({ url, eventSourceOptions: { withCredentials: true } }),
    false: splitLink({
      condition: (op) => op.context.idempotencyKey !== undefined,
      true: httpLink({
        url,
        fetch: withCredentials,
        headers: ({ op }) => ({ ...csrfHeaders([op]), [IDEMPOTENCY_HEADER]: op.context.idempotencyKey ?? '' }),
      }),
      false: httpBatchLink({ url, fetch: withCredentials, maxURLLength: options.maxURLLength ?? 4096, headers: ({ opList }) => csrfHeaders(opList) }),
    }),
  });
}

// `include` rather than the default `same-origin`, so a dashboard on another allowed origin (CORS_ORIGINS) works too.
const withCredentials = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => fetch(input, { ...init, credentials: 'include' });

function documentCookie(name: string): string | undefined {
  return typeof document === 'undefined' ? undefined : cookieValue(document.cookie, name);
}

/** The value of cookie `name` in a `Cookie`-style string (`a=1; b=2`). */
export function cookieValue(cookies: string, name: string): string | undefined {
  for (const part of cookies.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Narrows an error thrown by a call of this client. */
export function isClientError(error: unknown): error is ClientError {
  return error instanceof TRPCClientError;
}

/** The ProblemDetail of a failed call, or null when the call never got an answer (network down, aborted). */
export function problemOf(error: unknown): Problem | null {
  return isClientError(error) ? (error.data?.problem ?? null) : null;
}

/**
 * Call options that send `key` as the call's `Idempotency-Key` (CONTRACT §2.5), e.g.
 * `client.users.create.mutate(input, withIdempotencyKey(key))`. Reuse the key when retrying the same body.
 */
export function withIdempotencyKey(key: string): { context: { idempotencyKey: string } } {
  return { context: { idempotencyKey: key } };
}
