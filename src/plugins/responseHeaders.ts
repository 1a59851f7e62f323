// Request ids and security headers: set on every response before anything else runs (CONTRACT §2.2, §2.4).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import { securityHeaders } from '../rest/securityHeaders.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's `genReqId`: a well-formed incoming X-Request-Id is kept, anything else gets a fresh UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** The constant headers of a response to `url`: helmet's set, plus `no-store` under /api/. */
export type HeadersFor = (url: string) => Readonly<Record<string, string>>;

export function headersFor(config: Pick<Config, 'cookieSecure'>): HeadersFor {
  const staticHeaders = securityHeaders({ hsts: config.cookieSecure });
  const apiHeaders = Object.freeze({ ...staticHeaders, 'cache-control': 'no-store' });
  return (url) => (url.startsWith('/api/') ? apiHeaders : staticHeaders);
}

async function responseHeaders(app: FastifyInstance, opts: { headers: HeadersFor }): Promise<void> {
  // The first hook, so auth, CSRF and rate-limit errors carry the id and the headers too.
  app.addHook('onRequest', (req, reply, done) => {
    reply.headers(opts.headers(req.url));
    reply.header('x-request-id', req.id);
    done();
  });
}

export default fp(responseHeaders, { name: 'response-headers' });
