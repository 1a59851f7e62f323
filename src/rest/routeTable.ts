// The REST routes, derived by trpc-to-openapi from the routers' openapi meta: one entry per procedure, read by the facade and the OpenAPI document.
import { forEachOpenApiProcedure, getInputOutputParsers, type OpenApiMethod, type OpenApiProcedure } from 'trpc-to-openapi';
import { z } from 'zod';
import { restRouter } from '../routers/index.ts';
import type { Meta, RestMeta } from '../trpc.ts';

export type RestRoute = {
  method: OpenApiMethod;
  /** OpenAPI path relative to /api/v1, e.g. `/users/{user_id}`. */
  openapiPath: `/${string}`;
  /** Fastify URL, e.g. `/api/v1/users/:user_id`. */
  url: string;
  procedurePath: string;
  /** The procedure the route serves; the facade calls it as tRPC's own adapters do. */
  procedure: OpenApiProcedure;
  type: 'query' | 'mutation';
  pathParams: string[];
  /** Fields of the input object schema, or null for procedures without input. */
  inputShape: Record<string, z.ZodType> | null;
  /** The id the input schema was registered with (`.meta({ id })`), which names its request body in the OpenAPI document. */
  inputId: string | undefined;
  rest: RestMeta;
  meta: Meta & { openapi: NonNullable<Meta['openapi']> };
};

export const API_PREFIX = '/api/v1';

function buildRouteTable(router: typeof restRouter): RestRoute[] {
  const routes: RestRoute[] = [];
  forEachOpenApiProcedure<Meta>(router._def.procedures, ({ path, type, procedure, meta }) => {
    if (type === 'subscription') return;
    const { inputParser, hasInputsDefined } = getInputOutputParsers(procedure);
    const openapiPath = meta.openapi.path;
    routes.push({
      method: meta.openapi.method,
      openapiPath,
      url: API_PREFIX + openapiPath.replace(/\{(\w+)\}/g, ':$1'),
      procedurePath: path,
      procedure,
      type,
      pathParams: [...openapiPath.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? ''),
      inputShape: hasInputsDefined ? shapeOf(inputParser) : null,
      inputId: hasInputsDefined ? z.globalRegistry.get(inputParser)?.id : undefined,
      rest: meta.rest ?? {},
      meta,
    });
  });
  return routes;
}

/** The routes of the REST router (the application router's and the REST-only ones), in router order. */
export const routeTable: readonly RestRoute[] = buildRouteTable(restRouter);

function shapeOf(schema: z.ZodObject): Record<string, z.ZodType> {
  const entries: [string, unknown][] = Object.entries(schema.shape);
  return Object.fromEntries(entries.filter((entry): entry is [string, z.ZodType] => entry[1] instanceof z.ZodType));
}
