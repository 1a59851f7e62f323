// Slow clients (CONTRACT §2.4): a body that has not fully arrived REQUEST_TIMEOUT_S after its headers is cut with 408.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import { sendError } from '../rest/reply.ts';

// Node's own requestTimeout (app.ts) covers the headers only: it stops counting once a request is dispatched.
async function requestTimeout(app: FastifyInstance, opts: { config: Config }): Promise<void> {
  const limitMs = opts.config.requestTimeoutS * 1000;
  app.addHook('onRequest', (req, reply, done) => {
    const raw = req.raw;
    // Only a request announcing a body has one (RFC 9112 §6.3).
    const length = raw.headers['content-length'];
    if (raw.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return done();
    const timer = setTimeout(() => {
      if (raw.complete || reply.sent) return;
      reply.header('connection', 'close');
      void sendError(req, reply, new ApiError(2001, `request body not received in time (it must arrive within ${opts.config.requestTimeoutS} s)`, { status: 408 }), opts.config.publicUrl);
      // The rest of the body must not be read as a next request.
      reply.raw.once('finish', () => raw.socket.destroy());
    }, limitMs);
    timer.unref();
    raw.once('end', () => clearTimeout(timer));
    raw.once('close', () => clearTimeout(timer));
    done();
  });
}

export default fp(requestTimeout, { name: 'request-timeout' });
