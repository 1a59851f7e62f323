// GET /metrics (CONTRACT §4.10): Prometheus text, outside /api/v1 and every rate limit; counts every response.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Deps } from '../context/deps.ts';
import { nativePool } from '../db/pool.ts';
import { ApiError } from '../errors.ts';
import { countSentError, servedRegistry, type Metrics } from '../metrics/registry.ts';
import { sendError } from '../rest/reply.ts';
import { appRouter } from '../routers/index.ts';

export const METRICS_PATH = '/metrics';

// tRPC paths come from the URL: only real procedure names become label values, so clients cannot mint series.
const PROCEDURES = new Set(Object.keys(appRouter._def.procedures));

async function metricsPlugin(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { metrics, config } = opts.deps;
  metrics.watchPool(await nativePool(opts.deps.orm));
  const registry = servedRegistry(metrics);

  const seriesOf = requestSeries(metrics);
  // Callback style and no closures per request: this runs on every response.
  app.addHook('onResponse', (req, reply, done) => {
    const operation = operationOf(req);
    const status = reply.statusCode;
    const series = seriesOf(operation, req.method, status);
    series.count.inc();
    series.duration.observe(reply.elapsedTime / 1000);
    if (status === 401 && operation === 'auth.login') metrics.loginFailures.inc();
    if (reply.sentError !== null) countSentError(metrics, reply.sentError, operation);
    done();
  });

  const expected = config.metricsToken === undefined ? null : digest(config.metricsToken);
  app.get(METRICS_PATH, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    if (expected !== null && !bearerMatches(req.headers.authorization, expected)) {
      reply.header('www-authenticate', 'Bearer realm="metrics"');
      return sendError(req, reply, ApiError.unauthorized('GET /metrics needs Authorization: Bearer <METRICS_TOKEN>'), config.publicUrl);
    }
    const body = await registry.metrics();
    return reply.type(registry.contentType).send(body);
  });
}

type RequestSeries = { count: { inc(): void }; duration: { observe(seconds: number): void } };

/**
 * The request counter and histogram bound to one (operation, method, status), made once: prom-client's
 * labels() checks and copies the label values and binds new functions on every call. The values are
 * bounded (procedure names and route patterns, the methods Node's parser accepts, status codes), and
 * a bound series stays valid across a registry reset (it looks its values up on each call). Nested maps,
 * so a lookup hashes no new string.
 */
function requestSeries(metrics: Metrics): (operation: string, method: string, status: number) => RequestSeries {
  const made = new Map<string, Map<string, Map<number, RequestSeries>>>();
  return (operation, method, status) => {
    let byMethod = made.get(operation);
    if (byMethod === undefined) made.set(operation, (byMethod = new Map<string, Map<number, RequestSeries>>()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map<number, RequestSeries>()));
    let series = byStatus.get(status);
    if (series === undefined) {
      const labels = [operation, method, String(status)] as const;
      series = { count: metrics.requests.labels(...labels), duration: metrics.requestDuration.labels(...labels) };
      byStatus.set(status, series);
    }
    return series;
  };
}

/** The operation a request ran: its procedure path (REST or tRPC), else its route pattern, else `unmatched`. */
function operationOf(req: FastifyRequest): string {
  const options = req.routeOptions;
  const operation = options.config.operation;
  if (operation !== undefined) return operation;
  const url = options.url;
  if (url === undefined) return 'unmatched';
  if (url === '/api/trpc/:path') {
    const params = req.params;
    const path = typeof params === 'object' && params !== null && 'path' in params ? params.path : undefined;
    if (typeof path !== 'string') return 'trpc.unknown';
    if (PROCEDURES.has(path)) return path;
    return path.includes(',') ? 'trpc.batch' : 'trpc.unknown';
  }
  return url;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function bearerMatches(authorization: string | undefined, expected: Buffer): boolean {
  if (authorization === undefined || !/^bearer /i.test(authorization)) return false;
  // Digests have one length, so the comparison takes the same time whatever was sent.
  return timingSafeEqual(digest(authorization.slice(7).trim()), expected);
}

export default fp(metricsPlugin, { name: 'metrics' });

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The procedure a REST route runs (src/rest/facade.ts), e.g. `auth.me`. */
    operation?: string;
  }
}
