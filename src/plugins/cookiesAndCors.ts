// Cookie parsing, and CORS for the origins CORS_ORIGINS lists exactly (off when it lists none; CONTRACT §2.4).
import type { FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';

async function cookiesAndCors(app: FastifyInstance, opts: { config: Config }): Promise<void> {
  await app.register(cookie);
  if (opts.config.corsOrigins.length === 0) return;
  await app.register(cors, {
    origin: [...opts.config.corsOrigins],
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // What the API reads and answers with (CONTRACT §3.7): a page of a listed origin can retry a create
    // (Idempotency-Key), update with If-Match, and read ETag, Location, the limits and a replay's marker.
    allowedHeaders: ['content-type', 'authorization', 'x-csrf-token', 'x-request-id', 'if-match', 'idempotency-key', 'accept'],
    exposedHeaders: ['x-request-id', 'etag', 'location', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'idempotent-replayed'],
  });
}

export default fp(cookiesAndCors, { name: 'cookies-and-cors' });
