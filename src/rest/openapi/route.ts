// GET /api/v1/openapi.json: the document, built on the first request and kept for the life of the process.
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../context/deps.ts';
import { buildOpenApiDocument } from './document.ts';

export async function openApiRoute(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  let body: string | undefined;
  app.get('/api/v1/openapi.json', async (_req, reply) => {
    body ??= JSON.stringify(buildOpenApiDocument(opts.deps.config.publicUrl));
    return reply.type('application/json; charset=utf-8').send(body);
  });
}
