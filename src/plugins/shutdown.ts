// Graceful shutdown of the HTTP side (CONTRACT §2.4): 503/8001 while closing, open connections cut at the drain bound.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import { sendError } from '../rest/reply.ts';

/** How long in-flight requests may take to finish after close begins. */
export const DRAIN_TIMEOUT_MS = 10_000;

/** Requests that hold their answer (approval waits): answered with what they have the moment closing begins. */
export type HeldRequests = { endAll(): void };

async function shutdown(app: FastifyInstance, opts: { config: Config; drainMs?: number; held?: HeldRequests }): Promise<void> {
  let closing = false;
  let cut: NodeJS.Timeout | undefined;
  // Callback style: this runs on every request, and an async hook costs a promise each time.
  app.addHook('onRequest', (req, reply, done) => {
    if (!closing) return done();
    // A request that reached a keep-alive connection after close began; a load balancer retries it elsewhere.
    reply.header('connection', 'close');
    void sendError(req, reply, ApiError.unavailable('the service is shutting down', { retryAfter: 1 }), opts.config.publicUrl);
  });
  app.addHook('preClose', async () => {
    closing = true;
    // A wait may hold for a minute, longer than the drain: it answers now, with its approval's current state.
    opts.held?.endAll();
    // server.close() waits for every open connection; after the bound, the remaining ones are cut.
    cut = setTimeout(() => app.server.closeAllConnections(), opts.drainMs ?? DRAIN_TIMEOUT_MS);
    cut.unref();
  });
  app.addHook('onClose', async () => clearTimeout(cut));
}

export default fp(shutdown, { name: 'shutdown' });
