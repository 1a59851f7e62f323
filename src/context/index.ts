// The request context: a pure inner part every transport (REST, /api/trpc, createCaller) builds the same way.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Role } from '../contracts/roles.ts';
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

/**
 * The context itself. `em` is an own, enumerable accessor (tRPC's context merges and our `{ ...ctx }` copy
 * it as a value) whose getter is ONE function for every request. A getter written in a per-request object
 * literal is a new closure each time, and V8 kept each request's whole graph (reply, request, headers)
 * alive through it past two scavenges: ~5 KB promoted per request, a tenth of a healthz request's time in
 * the scavenger (bench/RESULTS.md).
 */
class RequestContext implements ContextInner {
  declare readonly em: EntityManager;
  readonly deps: Deps;
  readonly requestId: string;
  readonly ip: string;
  readonly userAgent: string | null;
  readonly credentials: Credentials;
  readonly response: ResponseSink;
  actor: Actor | null = null;
  readonly trace: { userId: string | null } = { userId: null };
  #em: EntityManager | undefined;

  constructor(input: ContextInput) {
    this.deps = input.deps;
    this.requestId = input.requestId ?? randomUUID();
    this.ip = input.ip ?? '127.0.0.1';
    this.userAgent = input.userAgent ?? null;
    this.credentials = input.credentials ?? {};
    this.response = input.response ?? recordingSink();
    Object.defineProperty(this, 'em', RequestContext.#emProperty);
  }

  // A fork per request keeps identity maps from leaking between requests; made on first use, so requests
  // that never touch the database (probes, 401s) do not pay for it.
  static readonly #emProperty: PropertyDescriptor = {
    get(this: RequestContext): EntityManager {
      return (this.#em ??= this.deps.orm.em.fork());
    },
    enumerable: true,
  };
}

export function createContextInner(input: ContextInput): ContextInner {
  return new RequestContext(input);
}

export type Context = ContextInner;
