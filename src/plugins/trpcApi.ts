// tRPC's own Fastify adapter at /api/trpc, for the TypeScript dashboard.
import { isUtf8 } from 'node:buffer';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import type { Deps } from '../context/deps.ts';
import { contextFromFastify } from '../context/fromFastify.ts';
import { toApiError } from '../errors.ts';
import { UNDECODABLE, undecodableParameter } from '../net/queryString.ts';
import { logServerError } from '../rest/reply.ts';
import { appRouter, type AppRouter } from '../routers/index.ts';

/**
 * The URL parameters tRPC reads (the input of a query or subscription, batching, an SSE resume point).
 * It decodes them itself through URLSearchParams, which turns bytes that are not UTF-8 into U+FFFD;
 * the app's strict query parser has already marked such a value, so the call is refused instead.
 */
const TRPC_URL_PARAMETERS = ['input', 'batch', 'lastEventId', 'Last-Event-Id', 'connectionParams'];

/** Bodies (of mutations) that are not UTF-8: tRPC's adapter reads them as text, which would replace the bytes. */
const undecodableBodies = new WeakSet<FastifyRequest>();

function undecodableInputOf(req: FastifyRequest): string | null {
  if (undecodableBodies.has(req)) return 'body: not valid UTF-8';
  const parameter = undecodableParameter(req.query, TRPC_URL_PARAMETERS);
  return parameter === undefined ? null : `${parameter}: ${UNDECODABLE}`;
}

async function* replay(head: readonly Buffer[], rest: AsyncIterator<unknown>): AsyncGenerator<unknown> {
  yield* head;
  for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
}

export default async function trpcApi(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  // Registered in this plugin's scope, so only /api/trpc bodies are read here (the REST facade checks its own).
  // The bytes are handed on unchanged; past the body limit they are not held but streamed on, so Fastify's
  // own limit refuses the request as it would have.
  const limit = app.initialConfig.bodyLimit ?? 1024 * 1024;
  app.addHook('preParsing', async (req, _reply, payload) => {
    if (req.method === 'GET' || req.method === 'HEAD') return payload;
    const chunks: Buffer[] = [];
    const source = payload[Symbol.asyncIterator]();
    let size = 0;
    for (let next = await source.next(); next.done !== true; next = await source.next()) {
      const chunk: unknown = next.value;
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      chunks.push(bytes);
      size += bytes.length;
      if (size > limit) return Readable.from(replay(chunks, source));
    }
    const body = Buffer.concat(chunks);
    if (!isUtf8(body)) undecodableBodies.add(req);
    return Readable.from([body]);
  });
  const trpcOptions: FastifyTRPCPluginOptions<AppRouter>['trpcOptions'] = {
    router: appRouter,
    createContext: ({ req, res }) => contextFromFastify(deps, req, res, undecodableInputOf(req)),
    onError: ({ error, req }) => {
      logServerError(req.log, toApiError(error), 'tRPC request failed', error);
    },
  };
  await app.register(fastifyTRPCPlugin, { prefix: '/api/trpc', trpcOptions });
}
