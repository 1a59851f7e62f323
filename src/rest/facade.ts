// The /api/v1 REST facade: one native Fastify route per procedure, invoked through createCaller.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { Deps } from '../context/deps.ts';
import { contextFromFastify } from '../context/fromFastify.ts';
import { ApiError, describeZodError, toApiError } from '../errors.ts';
import { appRouter, createCaller } from '../routers/index.ts';
import { etagOf } from '../services/etag.ts';
import { Pagination } from '../services/pagination.ts';
import { buildInput, locator } from './input.ts';
import { envelope, pageEnvelope, sendError } from './reply.ts';
import { buildRouteTable, type RestRoute } from './routeTable.ts';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';

const ALL_METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

export const routeTable = buildRouteTable(appRouter);

export async function restFacade(app: FastifyInstance, opts: { deps: Deps; corsEnabled: boolean }): Promise<void> {
  const { deps } = opts;
  const byUrl = new Map<string, RestRoute[]>();
  for (const route of routeTable) {
    byUrl.set(route.url, [...(byUrl.get(route.url) ?? []), route]);
    app.route({
      method: route.method,
      url: route.url,
      config: { operation: route.procedurePath },
      handler: (req, reply) => handle(route, deps, req, reply),
    });
  }

  // Wrong method on a known path: 405 with Allow (OPTIONS stays with the CORS plugin when it is on).
  for (const [url, routes] of byUrl) {
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

async function handle(route: RestRoute, deps: Deps, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const ctx = contextFromFastify(deps, req, reply);
  let result: unknown;
  try {
    const input = buildInput(route, req);
    result = await invoke(createCaller(ctx), route.procedurePath, input);
  } catch (error) {
    return sendError(req, reply, restError(error, route), deps.config.publicUrl);
  }
  const status = route.rest.status ?? 200;
  if (status === 204) return reply.code(204).send();
  reply.code(status);
  if (route.rest.location && isRecord(result)) reply.header('location', fillTemplate(route.rest.location, result));
  // A procedure may set its own tag (e.g. one that ignores a live countdown in the body).
  if (route.rest.etag && !reply.hasHeader('etag')) reply.header('etag', etagOf(result));
  if (route.rest.list) {
    const listed = ListResult.parse(result);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(pageEnvelope(listed.items, listed.pagination)));
  }
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(envelope(result)));
}

const ListResult = z.object({ items: z.array(z.unknown()), pagination: Pagination });

/** Like toApiError, but input errors name where the field was sent (`body.x`, `query.limit`, `path.user_id`). */
function restError(error: unknown, route: RestRoute): ApiError {
  if (error instanceof TRPCError && error.code === 'BAD_REQUEST' && error.cause instanceof z.ZodError) {
    return ApiError.badRequest(describeZodError(error.cause, locator(route)));
  }
  return toApiError(error);
}

/** Walks the caller proxy to the procedure (`users.get` → caller.users.get) and calls it. */
async function invoke(caller: object, procedurePath: string, input: unknown): Promise<unknown> {
  let node: unknown = caller;
  for (const segment of procedurePath.split('.')) {
    if ((typeof node !== 'object' && typeof node !== 'function') || node === null) break;
    node = Reflect.get(node, segment);
  }
  if (typeof node !== 'function') throw new Error(`no procedure at ${procedurePath}`);
  const result: unknown = await Reflect.apply(node, undefined, [input]);
  return result;
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
