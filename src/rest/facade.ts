// The /api/v1 REST facade: one native Fastify route per procedure, calling the procedure as createCaller does.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { Deps } from '../context/deps.ts';
import { contextFromFastify } from '../context/fromFastify.ts';
import { ApiError, describeZodError, toApiError } from '../errors.ts';
import { etagOf } from '../services/etag.ts';
import { deferredBodyParsers } from './body.ts';
import { buildInput, locator, takesBody } from './input.ts';
import { envelope, pageEnvelope, sendError } from './reply.ts';
import { routeTable, type RestRoute } from './routeTable.ts';
import { isStreamBody, sendStream } from './stream.ts';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { Pagination } from '../contracts/pagination.ts';

const ALL_METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

export async function restFacade(app: FastifyInstance, opts: { deps: Deps; corsEnabled: boolean }): Promise<void> {
  const { deps } = opts;
  // The operations get the deferred body parsers in a scope of their own; the 405 routes below keep the
  // app's, so a wrong method with a broken body is still refused as the broken body it is.
  await app.register(async (operations) => {
    deferredBodyParsers(operations);
    for (const route of routeTable) {
      const inputless = route.inputShape === null && route.pathParams.length === 0 && !takesBody(route);
      operations.route({
        method: route.method,
        url: route.url,
        config: { operation: route.procedurePath },
        handler: (req, reply) => handle(route, deps, req, reply, inputless),
      });
    }
  });

  // Wrong method on a known path: 405 with Allow (OPTIONS stays with the CORS plugin when it is on).
  for (const [url, routes] of Map.groupBy(routeTable, (route) => route.url)) {
    const allowed = new Set<string>(routes.map((r) => r.method));
    if (allowed.has('GET')) allowed.add('HEAD');
    const others = ALL_METHODS.filter((m) => !allowed.has(m) && !(opts.corsEnabled && m === 'OPTIONS'));
    const allow = [...allowed].join(', ');
    app.route({
      method: others,
      url,
      handler: (req, reply) => {
        reply.header('allow', allow);
        return sendError(req, reply, ApiError.methodNotAllowed(`method ${req.method} not allowed; allowed: ${allow}`), deps.config.publicUrl);
      },
    });
  }
}

/** The raw input of a route that takes none from anywhere (a GET without input or path parameters: healthz). */
const NO_INPUT: Promise<unknown> = Promise.resolve(undefined);
const noInput = () => NO_INPUT;

async function handle(route: RestRoute, deps: Deps, req: FastifyRequest, reply: FastifyReply, inputless: boolean): Promise<FastifyReply> {
  const ctx = contextFromFastify(deps, req, reply);
  let input: Promise<unknown> | undefined;
  let result: unknown;
  try {
    // Called as tRPC's own adapters call a procedure. The input is built when the procedure first reads
    // it, after its tier has authenticated and authorized the caller (CONTRACT §2.2).
    result = await route.procedure({
      ctx,
      path: route.procedurePath,
      type: route.type,
      getRawInput: inputless ? noInput : () => (input ??= Promise.resolve().then(() => buildInput(route, req))),
      signal: route.rest.abortOnDisconnect === true ? disconnectSignal(reply) : undefined,
      batchIndex: 0,
    });
  } catch (error) {
    return sendError(req, reply, restError(error, route), deps.config.publicUrl);
  }
  const stream = route.rest.stream;
  if (stream && isStreamBody(result)) {
    // A refusal before the body's first line (another export running) is still an ordinary error response.
    await sendStream(req, reply, result, stream.mediaType).catch((error: unknown) => sendError(req, reply, restError(error, route), deps.config.publicUrl));
    return reply;
  }
  const status = route.rest.status ?? 200;
  if (status === 204) return reply.code(204).send();
  reply.code(status);
  if (route.rest.location && isRecord(result)) reply.header('location', fillTemplate(route.rest.location, result));
  // A procedure may set its own tag (e.g. one that ignores a live countdown in the body).
  if (route.rest.etag && !reply.hasHeader('etag')) reply.header('etag', etagOf(result));
  if (route.rest.list) {
    // The procedure's output schema (a page() of its items) has checked the page: the items are sent as they are,
    // and only the small pagination object is parsed again, for its type.
    if (!isRecord(result) || !Array.isArray(result.items)) throw new Error(`${route.procedurePath} is a list but returned no items`);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(pageEnvelope(result.items, Pagination.parse(result.pagination))));
  }
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(envelope(result)));
}

/** Aborts when the connection closes before the answer was sent: the client went away (tRPC's adapter does the same). */
function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const res = reply.raw;
  res.once('close', () => {
    if (!res.writableEnded) controller.abort();
  });
  return controller.signal;
}

/** Like toApiError, but input errors name where the field was sent (`body.x`, `query.limit`, `path.user_id`). */
function restError(error: unknown, route: RestRoute): ApiError {
  if (error instanceof TRPCError && error.code === 'BAD_REQUEST' && error.cause instanceof z.ZodError) {
    return ApiError.badRequest(describeZodError(error.cause, locator(route)));
  }
  return toApiError(error);
}

function fillTemplate(template: string, data: Record<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => {
    const value = data[key];
    return encodeURIComponent(typeof value === 'string' || typeof value === 'number' ? String(value) : '');
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
