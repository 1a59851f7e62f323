// Fastify glue: reads credentials and client facts off a request and maps the response sink onto the reply.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { COOKIE_NAMES } from './cookieNames.ts';
// The request/reply cookie members come from this plugin's type augmentation; importing its types here
// (rather than relying on app.ts) keeps `import type { AppRouter }` type-checking on its own (CONTRACT §4.7).
import type {} from '@fastify/cookie';
import { createContextInner, type ContextInner, type Deps, type ResponseSink } from './index.ts';
import type { Credentials } from '../contracts/actor.ts';

// Tokens are base64url; anything else (spaces, NULs, 8 KB blobs) is not a credential at all.
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,512}$/;
// The scheme name is case-insensitive (RFC 9110 §11.1).
const BEARER_PATTERN = /^Bearer ([A-Za-z0-9_-]{16,512})$/i;

export function credentialsOf(req: FastifyRequest): Credentials {
  const cookies = req.cookies;
  const authorization = req.headers.authorization;
  const bearer = typeof authorization === 'string' ? BEARER_PATTERN.exec(authorization)?.[1] : undefined;
  const csrfHeader = req.headers['x-csrf-token'];
  const ifMatch = req.headers['if-match'];
  const idempotencyKey = req.headers['idempotency-key'];
  const origin = req.headers.origin;
  const fetchSite = req.headers['sec-fetch-site'];
  return {
    cookieToken: token(cookies[COOKIE_NAMES.session]),
    bearerToken: bearer,
    csrfCookie: cookies[COOKIE_NAMES.csrf],
    csrfHeader: typeof csrfHeader === 'string' ? csrfHeader : undefined,
    refreshToken: token(cookies[COOKIE_NAMES.refresh]),
    ifMatch: typeof ifMatch === 'string' ? ifMatch : undefined,
    idempotencyKey: typeof idempotencyKey === 'string' ? idempotencyKey : undefined,
    site: {
      origin: typeof origin === 'string' ? origin : undefined,
      fetchSite: typeof fetchSite === 'string' ? fetchSite : undefined,
      target: `${req.protocol}://${req.host}`,
    },
  };
}

function token(value: string | undefined): string | undefined {
  return value !== undefined && TOKEN_PATTERN.test(value) ? value : undefined;
}

export function replySink(reply: FastifyReply): ResponseSink {
  return {
    setCookie: (name, value, options) => void reply.setCookie(name, value, options),
    setHeader: (name, value) => void reply.header(name, value),
  };
}

/** `undecodableInput`: for a transport that reads its input from the URL itself (tRPC), see ContextInner. */
export function contextFromFastify(deps: Deps, req: FastifyRequest, reply: FastifyReply, undecodableInput: string | null = null): ContextInner {
  const userAgent = req.headers['user-agent'];
  const ctx = createContextInner({
    deps,
    requestId: req.id,
    ip: req.ip,
    userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 512) : null,
    credentials: credentialsOf(req),
    response: replySink(reply),
    undecodableInput,
  });
  req.trace = ctx.trace;
  return ctx;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Shared with the request context; holds the user id once authenticated, for the access log. */
    trace?: { userId: string | null };
  }
}
