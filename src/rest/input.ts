// Turns a REST request (path params, query string, JSON body) into the one input object a procedure takes.
import { z } from 'zod';
import { ApiError } from '../errors.ts';
import { UNDECODABLE, UndecodableText } from '../net/queryString.ts';
import { bodyOf } from './body.ts';
import type { RestRoute } from './routeTable.ts';

type Request = { params: unknown; query: unknown; body: unknown };

/** Methods whose input travels in the body; DELETE may carry one too (trpc-to-openapi would drop it). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function takesBody(route: RestRoute): boolean {
  return BODY_METHODS.has(route.method);
}

/** Where a field of the merged input came from, for error details like `query.limit: must be <= 200`. */
export function locator(route: RestRoute): (path: readonly PropertyKey[]) => string {
  const rest = route.method === 'GET' ? 'query' : 'body';
  return (path) => {
    const head = path[0];
    if (head === undefined) return rest;
    const where = typeof head === 'string' && route.pathParams.includes(head) ? 'path' : rest;
    return `${where}.${path.map(String).join('.')}`;
  };
}

/**
 * The procedure's raw input, built when the procedure reads it (after authentication). Fields are
 * defined, never assigned, so a `__proto__` key stays a key the input rules can refuse instead of
 * becoming the object's prototype.
 */
export function buildInput(route: RestRoute, req: Request): unknown {
  const shape = route.inputShape ?? {};
  const fields: [string, unknown][] = [];

  const body = takesBody(route) ? bodyOf(req.body) : undefined;
  if (body !== undefined) {
    // An omitted body is no input; `null`, arrays and scalars are not an object of fields.
    if (!isPlainObject(body)) throw ApiError.badRequest('body: must be a JSON object');
    for (const [key, value] of Object.entries(body)) {
      // A body may not smuggle a path parameter past the URL.
      if (route.pathParams.includes(key)) throw ApiError.badRequest(`body: unknown field ${key}`);
      fields.push([key, value]);
    }
  }

  if (route.method === 'GET' && isPlainObject(req.query)) {
    for (const [key, raw] of Object.entries(req.query)) {
      // Unknown query parameters are ignored (cache busters, tracking); bodies stay strict.
      const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
      if (field === undefined || route.pathParams.includes(key)) continue;
      if (Array.isArray(raw)) throw ApiError.badRequest(`query.${key}: must be given once`);
      if (raw instanceof UndecodableText) throw ApiError.badRequest(`query.${key}: ${UNDECODABLE}`);
      if (typeof raw !== 'string' || raw === '') continue; // an empty value counts as absent
      fields.push([key, coerce(field, raw)]);
    }
  }

  if (isPlainObject(req.params)) {
    for (const name of route.pathParams) {
      const raw = req.params[name];
      if (typeof raw !== 'string') continue;
      const field = Object.hasOwn(shape, name) ? shape[name] : undefined;
      fields.push([name, field ? coerce(field, raw) : raw]);
    }
  }

  if (route.inputShape === null) {
    const extra = fields.map(([key]) => key);
    if (extra.length > 0) throw ApiError.badRequest(`body: unknown field${extra.length > 1 ? 's' : ''} ${extra.join(', ')}`);
    return undefined;
  }
  return Object.fromEntries(fields);
}

/**
 * Converts a query/path string to the type its schema expects, without touching the schema itself.
 * Strings that do not look like the type are passed through so zod reports a clear error.
 */
function coerce(schema: z.core.$ZodType, raw: string): unknown {
  const base = unwrap(schema);
  if (base instanceof z.ZodNumber) {
    const integer = base.format === 'safeint' || base.format === 'int32' || base.format === 'uint32' || base.isInt;
    const pattern = integer ? /^\d{1,15}$/ : /^-?\d{1,15}(\.\d{1,15})?$/;
    return pattern.test(raw) ? Number(raw) : raw;
  }
  if (base instanceof z.ZodBoolean) {
    if (raw === 'true') return true;
    if (raw === 'false') return false;
  }
  return raw;
}

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  let current: z.core.$ZodType = schema;
  for (let depth = 0; depth < 10; depth++) {
    if (current instanceof z.ZodOptional || current instanceof z.ZodNullable) current = current.unwrap();
    else if (current instanceof z.ZodDefault || current instanceof z.ZodPrefault) current = current.unwrap();
    else if (current instanceof z.ZodPipe) current = current.in;
    else break;
  }
  return current;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
