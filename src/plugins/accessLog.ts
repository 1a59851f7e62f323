// The access log: one line per completed request, probes at debug level (CONTRACT §2.4).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

const QUIET_ROUTES = new Set(['/api/v1/healthz', '/api/v1/readyz']);

/**
 * Writes a request's one access-log line: the hook below for routed requests, errorHandlers.ts for those
 * the router refused (Fastify runs no hooks for them). `durationMs` for a request whose reply did not time itself.
 */
export function logCompletedRequest(req: FastifyRequest, reply: FastifyReply, durationMs: number = reply.elapsedTime): void {
  const route = req.routeOptions.url ?? req.url.split('?')[0] ?? '';
  // Probes log at debug level; skip building their line when nobody will read it.
  const quiet = QUIET_ROUTES.has(route);
  if (quiet && req.log.level !== 'debug' && req.log.level !== 'trace') return;
  const line = {
    method: req.method,
    route,
    status: reply.statusCode,
    duration_ms: Math.round(durationMs * 100) / 100,
    user_id: req.trace?.userId ?? null,
  };
  if (quiet) req.log.debug(line, 'request completed');
  else req.log.info(line, 'request completed');
}

async function accessLog(app: FastifyInstance): Promise<void> {
  app.addHook('onResponse', (req, reply, done) => {
    logCompletedRequest(req, reply);
    done();
  });
}

export default fp(accessLog, { name: 'access-log' });

declare module 'fastify' {
  interface FastifyRequest {
    /** Shared with the request context; holds the user id once authenticated, for the access log. */
    trace?: { userId: string | null };
  }
}
