// buildApp(deps) → a ready Fastify instance (no listen), composed of one plugin per concern (src/plugins).
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Deps } from './context/deps.ts';
import accessLog from './plugins/accessLog.ts';
import bodyParsers, { BODY_LIMIT } from './plugins/bodyParsers.ts';
import cookiesAndCors from './plugins/cookiesAndCors.ts';
import errorHandlers from './plugins/errorHandlers.ts';
import responseHeaders, { headersFor, requestIdOf } from './plugins/responseHeaders.ts';
import restApi from './plugins/restApi.ts';
import trpcApi from './plugins/trpcApi.ts';
import { docsRoutes } from './rest/docs.ts';

export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    // The access-log plugin writes the one line per request.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestIdOf,
    bodyLimit: BODY_LIMIT,
    // Long ids must reach our own 1..128 check (400/2001) instead of Fastify's 414/404.
    routerOptions: { maxParamLength: 256, ignoreTrailingSlash: false },
    trustProxy: config.trustProxy,
    return503OnClosing: true,
  });

  await app.register(responseHeaders, { headers: headersFor(config) });
  await app.register(accessLog);
  await app.register(cookiesAndCors, { config });
  await app.register(bodyParsers);
  await app.register(errorHandlers, { config });

  await app.register(restApi, { deps });
  await app.register(docsRoutes, { deps });
  await app.register(trpcApi, { deps });
  return app;
}
