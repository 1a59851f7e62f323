// tRPC's own Fastify adapter at /api/trpc, for the TypeScript dashboard.
import type { FastifyInstance } from 'fastify';
import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import type { Deps } from '../context/deps.ts';
import { contextFromFastify } from '../context/fromFastify.ts';
import { toApiError } from '../errors.ts';
import { undecodableParameter } from '../net/queryString.ts';
import { logServerError } from '../rest/reply.ts';
import { appRouter, type AppRouter } from '../routers/index.ts';

/**
 * The URL parameters tRPC reads (the input of a query or subscription, batching, an SSE resume point).
 * It decodes them itself through URLSearchParams, which turns bytes that are not UTF-8 into U+FFFD;
 * the app's strict query parser has already marked such a value, so the call is refused instead.
 */
const TRPC_URL_PARAMETERS = ['input', 'batch', 'lastEventId', 'Last-Event-Id', 'connectionParams'];

export default async function trpcApi(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  const trpcOptions: FastifyTRPCPluginOptions<AppRouter>['trpcOptions'] = {
    router: appRouter,
    createContext: ({ req, res }) => contextFromFastify(deps, req, res, undecodableParameter(req.query, TRPC_URL_PARAMETERS) ?? null),
    onError: ({ error, req }) => {
      logServerError(req.log, toApiError(error), 'tRPC request failed', error);
    },
  };
  await app.register(fastifyTRPCPlugin, { prefix: '/api/trpc', trpcOptions });
}
