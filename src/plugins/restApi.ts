// The REST API under /api/v1: the facade's routes and the OpenAPI document that describes them.
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../context/deps.ts';
import { restFacade } from '../rest/facade.ts';
import { openApiRoute } from '../rest/openapi/route.ts';

export default async function restApi(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  await app.register(restFacade, { deps: opts.deps, corsEnabled: opts.deps.config.corsOrigins.length > 0 });
  await app.register(openApiRoute, { deps: opts.deps });
}
