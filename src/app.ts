// buildApp(deps) → a ready Fastify instance (no listen), composed of one plugin per concern (src/plugins).
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { TrustProxy } from './config.ts';
import type { Deps } from './context/deps.ts';
import accessLog from './plugins/accessLog.ts';
import bodyParsers, { BODY_LIMIT } from './plugins/bodyParsers.ts';
import cookiesAndCors from './plugins/cookiesAndCors.ts';
import metrics from './plugins/metrics.ts';
import errorHandlers, { clientErrorHandler, frameworkErrorHandler, MAX_URL_LENGTH } from './plugins/errorHandlers.ts';
import responseHeaders, { headersFor, requestIdOf } from './plugins/responseHeaders.ts';
import requestTimeout from './plugins/requestTimeout.ts';
import restApi from './plugins/restApi.ts';
import shutdown from './plugins/shutdown.ts';
import { deferredChildLogger } from './requestLogger.ts';
import { parseQueryString } from './net/queryString.ts';
import trpcApi from './plugins/trpcApi.ts';
import dashboard from './plugins/dashboard.ts';
import { eventRoutes } from './events/plugin.ts';
import { docsRoutes } from './rest/docs.ts';

export async function buildApp(deps: Deps, opts: { drainMs?: number } = {}): Promise<FastifyInstance> {
  const { config } = deps;
  const headers = headersFor(config);
  const app = Fastify({
    loggerInstance: deps.logger,
    // The access-log plugin writes the one line per request.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: deferredChildLogger,
    requestIdHeader: false,
    genReqId: requestIdOf,
    bodyLimit: BODY_LIMIT,
    routerOptions: {
      // Path params of /api/v1 are checked by their schemas (1..128 → 400/2001); the router's own limit
      // only has to let long tRPC batch paths through.
      maxParamLength: MAX_URL_LENGTH,
      ignoreTrailingSlash: true,
      // Strict decoding: a value that is not percent-encoded UTF-8 is refused by whoever reads it (CONTRACT §2.2).
      querystringParser: parseQueryString,
    },
    trustProxy: trustProxyOption(config.trustProxy),
    // Headers must arrive within REQUEST_TIMEOUT_S (the body: src/plugins/requestTimeout.ts).
    requestTimeout: config.requestTimeoutS * 1000,
    // Node checks that timeout on this interval (30 s by default), so a 30 s timeout would fire anywhere up to 60 s.
    http: { connectionsCheckingInterval: Math.min(1000, config.requestTimeoutS * 250) },
    // Our shutdown plugin answers requests that arrive while closing.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler({ config, headers }),
    clientErrorHandler: clientErrorHandler({ config, headers, log: deps.logger }),
  });

  await app.register(responseHeaders, { headers });
  await app.register(accessLog);
  await app.register(errorHandlers, { config, headers });
  await app.register(shutdown, { config, held: deps.approvalWaits, ...(opts.drainMs === undefined ? {} : { drainMs: opts.drainMs }) });
  await app.register(requestTimeout, { config });
  await app.register(cookiesAndCors, { config });
  await app.register(bodyParsers);
  if (config.metricsEnabled) await app.register(metrics, { deps });

  await app.register(restApi, { deps });
  await app.register(docsRoutes, { deps });
  await app.register(eventRoutes, { deps, corsEnabled: config.corsOrigins.length > 0 });
  await app.register(trpcApi, { deps });
  await app.register(dashboard, { deps });
  return app;
}

/**
 * Fastify's trustProxy for TRUST_PROXY. A hop count becomes a function: Fastify 5.12.8 turns a plain
 * number into "trust nobody" (lib/request.js), so `trustProxy: 1` would silently ignore the proxy.
 */
function trustProxyOption(trust: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false) return false;
  // Hop 0 is the socket peer; the client is the first address beyond the trusted hops.
  if ('hops' in trust) return (_address, hop) => hop < trust.hops;
  return [...trust.addresses];
}
