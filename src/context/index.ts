// The request context: a pure inner part every transport (REST, /api/trpc, createCaller) builds the same way.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor, Credentials } from '../contracts/actor.ts';
import type { Deps } from './deps.ts';

export type { Deps } from './deps.ts';

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
  /**
   * Why the input the transport received cannot be read as text (a URL parameter that is not
   * percent-encoded UTF-8, a body that is not UTF-8), as the refusal's detail; the input rules refuse the
   * call with it once the caller is authorized (CONTRACT §2.2).
   */
  undecodableInput: string | null;
};

export type ContextInput = {
  deps: Deps;
  requestId?: string;
  ip?: string;
  userAgent?: string | null;
  credentials?: Credentials;
  response?: ResponseSink;
  undecodableInput?: string | null;
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
 * alive through it past two scavenges: every request was promoted to the old generation, and the
 * scavenger's time became a real share of a probe's
 * (docs/foundation.md#measured-reasons-behind-the-code).
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
  readonly undecodableInput: string | null;
  #em: EntityManager | undefined;

  constructor(input: ContextInput) {
    this.deps = input.deps;
    this.requestId = input.requestId ?? randomUUID();
    this.ip = input.ip ?? '127.0.0.1';
    this.userAgent = input.userAgent ?? null;
    this.credentials = input.credentials ?? {};
    this.response = input.response ?? recordingSink();
    this.undecodableInput = input.undecodableInput ?? null;
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
