// The request context: a pure inner part every transport (REST, /api/trpc, createCaller) builds the same way.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Role } from '../services/auth/roles.ts';
import type { Deps } from './deps.ts';

export type { Deps } from './deps.ts';

/** Credentials as the transport found them; resolved to an actor only when a procedure needs one. */
export type Credentials = {
  /** Value of the `session` cookie, if any. */
  cookieToken?: string | undefined;
  /** Token of `Authorization: Bearer <token>`, if the header was well-formed. */
  bearerToken?: string | undefined;
  /** The `csrf_token` cookie and the `X-CSRF-Token` header (double submit, CONTRACT §3.2). */
  csrfCookie?: string | undefined;
  csrfHeader?: string | undefined;
  /** The `refresh_token` cookie (Path=/api: sent with every API request, read by refresh and logout). */
  refreshToken?: string | undefined;
  /** Conditional-request header for optimistic concurrency (CONTRACT §2.1). */
  ifMatch?: string | undefined;
  /** `Idempotency-Key` of a create that may be retried (CONTRACT §2.5). */
  idempotencyKey?: string | undefined;
};

export type CookieOptions = {
  path: string;
  httpOnly: boolean;
  sameSite: 'strict';
  secure: boolean;
  maxAge: number;
};

/** What a procedure may add to the response besides its data; each transport applies it its own way. */
export type ResponseSink = {
  setCookie(name: string, value: string, options: CookieOptions): void;
  setHeader(name: string, value: string): void;
};

export type Actor = {
  userId: string;
  username: string;
  role: Role;
  mustChangePassword: boolean;
  orgRoles: string[];
  scopedDepartments: string[];
  sessionId: string;
  /** How the request proved who it is; CSRF applies to cookies only. */
  via: 'cookie' | 'bearer';
};

export type ContextInner = {
  deps: Deps;
  em: EntityManager;
  requestId: string;
  ip: string;
  userAgent: string | null;
  credentials: Credentials;
  response: ResponseSink;
  actor: Actor | null;
  /** Facts about the request gathered on the way, for the access log. */
  trace: { userId: string | null };
};

export type ContextInput = {
  deps: Deps;
  requestId?: string;
  ip?: string;
  userAgent?: string | null;
  credentials?: Credentials;
  response?: ResponseSink;
};

/** A sink that remembers what was set; the default for createCaller, handy in tests. */
export function recordingSink(): ResponseSink & { cookies: Map<string, { value: string; options: CookieOptions }>; headers: Map<string, string> } {
  const cookies = new Map<string, { value: string; options: CookieOptions }>();
  const headers = new Map<string, string>();
  return {
    cookies,
    headers,
    setCookie: (name, value, options) => void cookies.set(name, { value, options }),
    setHeader: (name, value) => void headers.set(name.toLowerCase(), value),
  };
}

export function createContextInner(input: ContextInput): ContextInner {
  let em: EntityManager | undefined;
  return {
    deps: input.deps,
    // A fork per request keeps identity maps from leaking between requests; made on first use, so
    // requests that never touch the database (probes, 401s) do not pay for it.
    get em() {
      return (em ??= input.deps.orm.em.fork());
    },
    requestId: input.requestId ?? randomUUID(),
    ip: input.ip ?? '127.0.0.1',
    userAgent: input.userAgent ?? null,
    credentials: input.credentials ?? {},
    response: input.response ?? recordingSink(),
    actor: null,
    trace: { userId: null },
  };
}

export type Context = ContextInner;
