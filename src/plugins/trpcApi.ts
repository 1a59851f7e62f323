// tRPC's own Fastify adapter at /api/trpc, for the TypeScript dashboard.
import type { FastifyInstance } from 'fastify';
import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import type { Deps } from '../context/deps.ts';
import { contextFromFastify } from '../context/fromFastify.ts';
import { toApiError } from '../errors.ts';
import { logServerError } from '../rest/reply.ts';
import { appRouter, type AppRouter } from '../routers/index.ts';

export default async function trpcApi(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  const trpcOptions: FastifyTRPCPluginOptions<AppRouter>['trpcOptions'] = {
    router: appRouter,
    createContext: ({ req, res }) => contextFromFastify(deps, req, res),
    onError: ({ error, req }) => {
      logServerError(req.log, toApiError(error), 'tRPC request failed', error);
    },
  };
  await app.register(fastifyTRPCPlugin, { prefix: '/api/trpc', trpcOptions });
}
