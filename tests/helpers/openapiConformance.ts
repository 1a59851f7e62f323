// Checks recorded responses against the OpenAPI document: the schema and headers documented for that operation, status and media type.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

export type OpenApiDocument = {
  openapi: string;
  info?: Record<string, unknown>;
  servers?: { url: string }[];
  paths?: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown>;
};

type Recorded = { statusCode: number; headers: Record<string, unknown>; body: string };

const API_PREFIX = '/api/v1';
const ROOT_ID = 'urn:agent-org:openapi';
// Keywords OpenAPI 3.1 adds to JSON Schema; annotations only, they never reject a body.
const OAS_KEYWORDS = ['discriminator', 'xml', 'externalDocs', 'example'];
// A wrong method on a known path or an unknown path belongs to no operation; both are answered by
// the one error builder, so their bodies must match the shared error schemas.
const ROUTE_LEVEL_ERRORS = new Set([404, 405]);
const ROUTE_LEVEL_SCHEMAS: Record<string, string> = {
  'application/json': '#/components/schemas/ErrorResponse',
  'application/problem+json': '#/components/schemas/ProblemDetail',
};

/**
 * Headers the document declares where they apply: a response that carries one must document it there (and
 * a documented one marked required must be sent). Lower-case, as Node gives them.
 */
const DECLARED_HEADERS = [
  'x-request-id',
  'retry-after',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'location',
  'etag',
  'set-cookie',
  'clear-site-data',
  'idempotent-replayed',
];

const validators = new WeakMap<OpenApiDocument, { ajv: Ajv2020; compiled: Map<string, ValidateFunction> }>();

/**
 * Asserts that `body` (parsed JSON, or undefined for an empty body) is what the document promises for
 * `method path` answering `status` with `contentType`, and, when `headers` are given, that the response's
 * headers are the documented ones. `path` is the concrete request path (`/api/v1/users/abc?x=1`); it is
 * matched against the documented path templates. Bodies are checked closed: a field the document does not
 * name fails, although the document itself leaves response objects open for later additions.
 */
export function expectConforms(
  doc: OpenApiDocument,
  method: string,
  path: string,
  status: number,
  body: unknown,
  contentType: string | undefined,
  headers?: Record<string, unknown>,
  opts: { emptyStream?: boolean } = {},
): void {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  const where = `${method} ${path} → ${status}${mediaType ? ` (${mediaType})` : ''}`;
  const operation = findOperation(doc, method, path);

  let schemaRef: string;
  if (operation === null) {
    if (!ROUTE_LEVEL_ERRORS.has(status)) throw new Error(`${where}: no documented operation ${method} ${templateOf(path)}`);
    const ref = mediaType === undefined ? undefined : ROUTE_LEVEL_SCHEMAS[mediaType];
    if (ref === undefined) throw new Error(`${where}: route-level errors are sent as application/json or application/problem+json`);
    schemaRef = ref;
  } else {
    const declared = record(record(operation.node.responses)[String(status)]);
    if (Object.keys(declared).length === 0) {
      throw new Error(`${where}: status ${status} is not documented for ${operation.method.toUpperCase()} ${operation.template}`);
    }
    // A shared response (`$ref` to components.responses) may carry an operation's own description beside it.
    const responsePointer =
      typeof declared.$ref === 'string' ? declared.$ref : `#/paths/${pointerEscape(operation.template)}/${operation.method}/responses/${status}`;
    const response = typeof declared.$ref === 'string' ? resolve(doc, declared.$ref) : declared;
    if (headers !== undefined) expectHeaders(doc, where, record(response.headers), headers);
    const content = response.content;
    if (content === undefined) {
      // A documented response without content (204) must come without a body and without a media type.
      expect(body, `${where}: documented without a body`).toBeUndefined();
      expect(mediaType, `${where}: documented without a body, so without Content-Type`).toBeUndefined();
      return;
    }
    if (mediaType === undefined || !(mediaType in record(content))) {
      throw new Error(`${where}: media type ${mediaType ?? '(none)'} is not documented; documented: ${Object.keys(record(content)).join(', ')}`);
    }
    schemaRef = `${responsePointer}/content/${pointerEscape(mediaType)}/schema`;
  }

  // A stream of no records (an export that matched nothing) has no line to hold to the schema of one.
  if (opts.emptyStream === true) return;
  const validate = validatorFor(doc, schemaRef);
  const valid = validate(body);
  if (!valid) {
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
    throw new Error(`${where}: body does not match the documented schema:\n  ${errors.join('\n  ')}\nbody: ${JSON.stringify(body)}`);
  }
}

/** The same for a recorded response of `app.inject` or a parsed fetch response: takes status, Content-Type and body from it. */
export function expectResponseConforms(doc: OpenApiDocument, method: string, path: string, res: Recorded): void {
  const contentType = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : undefined;
  // NDJSON (the audit export) is documented by the schema of one line: each line must match it.
  if (contentType?.startsWith('application/x-ndjson') === true) {
    const lines = res.body.split('\n').filter((line) => line !== '');
    if (lines.length === 0) expectConforms(doc, method, path, res.statusCode, undefined, contentType, res.headers, { emptyStream: true });
    for (const line of lines) expectConforms(doc, method, path, res.statusCode, JSON.parse(line) as unknown, contentType, res.headers);
    return;
  }
  const body = res.body === '' ? undefined : (JSON.parse(res.body) as unknown);
  expectConforms(doc, method, path, res.statusCode, body, contentType, res.headers);
}

/** Required documented headers are sent, sent ones match their schema, and every declared kind of header sent is documented. */
function expectHeaders(doc: OpenApiDocument, where: string, documented: Record<string, unknown>, sent: Record<string, unknown>): void {
  const byName = new Map(Object.entries(documented).map(([name, header]) => [name.toLowerCase(), resolveRecord(doc, header)]));
  for (const [name, header] of byName) {
    const value = sent[name];
    if (value === undefined) {
      if (header.required === true) throw new Error(`${where}: documented required header ${name} was not sent`);
      continue;
    }
    const schema = resolveRecord(doc, header.schema);
    for (const one of Array.isArray(value) ? value : [value]) {
      const text = String(one);
      const typed = schema.type === 'integer' || schema.type === 'number' ? Number(text) : text;
      const validate = headerValidator(schema);
      if (!validate(typed)) throw new Error(`${where}: header ${name}: ${text} does not match ${JSON.stringify(schema)}`);
    }
  }
  for (const name of DECLARED_HEADERS) {
    if (sent[name] !== undefined && !byName.has(name)) throw new Error(`${where}: header ${name} was sent but is not documented for this response`);
  }
}

const headerAjv = new Ajv2020({ strict: false });
const headerValidators = new Map<string, ValidateFunction>();

function headerValidator(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = headerValidators.get(key);
  if (!validate) {
    validate = headerAjv.compile(schema);
    headerValidators.set(key, validate);
  }
  return validate;
}

function resolve(doc: OpenApiDocument, ref: string): Record<string, unknown> {
  if (!ref.startsWith('#/')) throw new Error(`only local references are supported: ${ref}`);
  let node: unknown = doc;
  for (const segment of ref.slice(2).split('/')) node = record(node)[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
  const found = record(node);
  if (Object.keys(found).length === 0) throw new Error(`unresolved reference ${ref}`);
  return found;
}

function resolveRecord(doc: OpenApiDocument, node: unknown): Record<string, unknown> {
  const r = record(node);
  return typeof r.$ref === 'string' ? resolve(doc, r.$ref) : r;
}

type Operation = { template: string; method: string; node: Record<string, unknown> };

function findOperation(doc: OpenApiDocument, method: string, path: string): Operation | null {
  const wanted = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const template = templateOf(path);
  const candidates = Object.entries(doc.paths ?? {})
    .filter(([documented]) => pathPattern(documented).test(template))
    // A literal segment beats a parameter (`/setup/name-locales/available` over `/setup/name-locales/{x}`).
    .sort(([a], [b]) => paramCount(a) - paramCount(b));
  for (const [documented, item] of candidates) {
    const node = item[wanted];
    if (node !== undefined) return { template: documented, method: wanted, node: record(node) };
  }
  return null;
}

/** `/api/v1/users/abc?x=1` → `/users/abc` (the document's paths are relative to its server URL). */
function templateOf(path: string): string {
  const bare = path.split('?')[0] ?? path;
  return bare.startsWith(API_PREFIX) ? bare.slice(API_PREFIX.length) || '/' : bare;
}

function pathPattern(template: string): RegExp {
  const source = template
    .split(/\{[^}]+\}/)
    .map((literal) => literal.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`^${source}$`);
}

function paramCount(template: string): number {
  return (template.match(/\{/g) ?? []).length;
}

function validatorFor(doc: OpenApiDocument, ref: string): ValidateFunction {
  let entry = validators.get(doc);
  if (!entry) {
    const ajv = new Ajv2020({ strict: true, strictTypes: false, strictTuples: false, allErrors: true });
    // A CommonJS module: the default import is module.exports, which carries the plugin as `.default`.
    addFormats.default(ajv);
    ajv.addVocabulary(OAS_KEYWORDS);
    // The document's refs are local (`#/components/schemas/X`), so the whole document is the root
    // schema they resolve against; `paths` and `components` are containers, never validated themselves.
    ajv.addVocabulary(['openapi', 'info', 'servers', 'tags', 'paths', 'components', 'security', 'webhooks', 'jsonSchemaDialect']);
    ajv.addSchema({ ...closed(doc), $id: ROOT_ID });
    entry = { ajv, compiled: new Map() };
    validators.set(doc, entry);
  }
  let validate = entry.compiled.get(ref);
  if (!validate) {
    validate = entry.ajv.compile({ $ref: `${ROOT_ID}${ref}` });
    entry.compiled.set(ref, validate);
  }
  return validate;
}

/**
 * A copy of the document whose object schemas admit only the properties they name: the service must send
 * what it documents and nothing else, while the document leaves room for fields added later.
 */
function closed<T>(node: T): T {
  const copy = structuredClone(node);
  const close = (n: unknown): void => {
    if (Array.isArray(n)) for (const item of n) close(item);
    else if (typeof n === 'object' && n !== null) {
      if ('properties' in n && !('additionalProperties' in n)) Reflect.set(n, 'additionalProperties', false);
      for (const value of Object.values(n)) close(value);
    }
  };
  close(copy);
  return copy;
}

function pointerEscape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {};
}
