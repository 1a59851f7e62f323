// buildApp(deps) → a ready Fastify instance (no listen), so the server, tests and benchmarks share it.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyError, type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import type { Deps } from './context/deps.ts';
import { contextFromFastify } from './context/fromFastify.ts';
import { ApiError, toApiError } from './errors.ts';
import { appRouter, type AppRouter } from './routers/index.ts';
import { eventRoutes } from './events/plugin.ts';
import { docsRoutes } from './rest/docs.ts';
import { restFacade } from './rest/facade.ts';
import { openApiRoute } from './rest/openapi.ts';
import { sendError } from './rest/reply.ts';
import { securityHeaders } from './rest/securityHeaders.ts';

export const BODY_LIMIT = 1024 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const QUIET_ROUTES = new Set(['/api/v1/healthz', '/api/v1/readyz']);

export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    // Our own onResponse hook writes the one access-log line per request.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    bodyLimit: BODY_LIMIT,
    // Long ids must reach our own 1..128 check (400/2001) instead of Fastify's 414/404.
    routerOptions: { maxParamLength: 256, ignoreTrailingSlash: false },
    trustProxy: config.trustProxy,
    return503OnClosing: true,
  });

  // Before anything else, so auth, CSRF and rate-limit errors carry the id too.
  const staticHeaders = securityHeaders({ hsts: config.cookieSecure });
  const apiHeaders = Object.freeze({ ...staticHeaders, 'cache-control': 'no-store' });
  app.addHook('onRequest', (req, reply, done) => {
    reply.headers(req.url.startsWith('/api/') ? apiHeaders : staticHeaders);
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? req.url.split('?')[0] ?? '';
    // Probes log at debug level; skip building their line when nobody will read it.
    const quiet = QUIET_ROUTES.has(route);
    if (!quiet || req.log.level === 'debug' || req.log.level === 'trace') {
      const line = {
        method: req.method,
        route,
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
        user_id: req.trace?.userId ?? null,
      };
      if (quiet) req.log.debug(line, 'request completed');
      else req.log.info(line, 'request completed');
    }
    done();
  });

  await app.register(cookie);
  const corsEnabled = config.corsOrigins.length > 0;
  if (corsEnabled) {
    await app.register(cors, {
      origin: [...config.corsOrigins],
      credentials: true,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: ['content-type', 'authorization', 'x-csrf-token', 'x-request-id', 'if-match', 'accept'],
      exposedHeaders: ['x-request-id', 'etag', 'location', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'],
    });
  }

  // One tolerant JSON parser: an empty body means "no input"; anything but JSON is refused as 400/2001.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(ApiError.badRequest('body: malformed JSON'), undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (req, body, done) => {
    const empty = typeof body === 'string' ? body.length === 0 : body.length === 0;
    if (empty) return done(null, undefined);
    done(ApiError.badRequest(`body: unsupported content type ${String(req.headers['content-type'] ?? '(none)')}; send application/json`), undefined);
  });

  app.setErrorHandler((error: FastifyError | ApiError, req, reply) => sendError(req, reply, fastifyError(error), config.publicUrl));
  app.setNotFoundHandler((req, reply) => sendError(req, reply, ApiError.routeNotFound(`no endpoint ${req.method} ${req.url.split('?')[0] ?? ''}`), config.publicUrl));

  await app.register(restFacade, { deps, corsEnabled });
  await app.register(openApiRoute, { deps });
  await app.register(docsRoutes, { deps });
  await app.register(eventRoutes, { deps, corsEnabled });

  const trpcOptions: FastifyTRPCPluginOptions<AppRouter>['trpcOptions'] = {
    router: appRouter,
    createContext: ({ req, res }) => contextFromFastify(deps, req, res),
    onError: ({ error, req }) => {
      const apiError = toApiError(error);
      if (apiError.status >= 500) req.log.error({ err: apiError.cause ?? error }, 'tRPC request failed');
    },
  };
  await app.register(fastifyTRPCPlugin, { prefix: '/api/trpc', trpcOptions });

  return app;
}

/** Fastify's own failures (body too large, bad content length, ...) in our error model. */
function fastifyError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return ApiError.badRequest('body: too large (max 1 MiB)');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return ApiError.badRequest(`body: ${error.message}`);
    default:
      if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
        return ApiError.badRequest(error.message);
      }
      return toApiError(error);
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Shared with the request context; holds the user id once authenticated, for the access log. */
    trace?: { userId: string | null };
  }
}
