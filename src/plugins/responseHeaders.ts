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

/**
 * helmet's headers that only a document (an HTML page a browser renders or a top-level window) acts on:
 * on a JSON response under /api/ no browser reads them, and each costs header bytes and validation on
 * every response (healthz: bench/RESULTS.md). The dashboard and /docs keep them. What CONTRACT §2.4 asks
 * of every response (nosniff, X-Frame-Options, Referrer-Policy, the strict CSP), CORP and HSTS stay.
 */
const DOCUMENT_ONLY = new Set([
  'cross-origin-opener-policy', // the browsing-context group of a top-level document
  'origin-agent-cluster', // agent-cluster keying of a document
  'x-dns-prefetch-control', // DNS prefetching of links in a page
  'x-download-options', // IE8: opening downloaded HTML in the site's context
  'x-permitted-cross-domain-policies', // Flash/Acrobat policy files
  'x-xss-protection', // helmet sends "0" to turn off the legacy filter of HTML pages
]);

/** The constant headers of a response to `url`: helmet's set; under /api/ without DOCUMENT_ONLY, plus `no-store`. */
export type HeadersFor = (url: string) => Readonly<Record<string, string>>;

export function headersFor(config: Pick<Config, 'cookieSecure'>): HeadersFor {
  const staticHeaders = securityHeaders({ hsts: config.cookieSecure });
  const apiHeaders = Object.freeze({
    ...Object.fromEntries(Object.entries(staticHeaders).filter(([name]) => !DOCUMENT_ONLY.has(name))),
    'cache-control': 'no-store',
  });
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
