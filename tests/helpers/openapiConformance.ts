// Checks recorded responses against the OpenAPI document: the schema documented for that operation, status and media type.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

export type OpenApiDocument = {
  openapi: string;
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

const validators = new WeakMap<OpenApiDocument, { ajv: Ajv2020; compiled: Map<string, ValidateFunction> }>();

/**
 * Asserts that `body` (parsed JSON, or undefined for an empty body) is what the document promises for
 * `method path` answering `status` with `contentType`. `path` is the concrete request path
 * (`/api/v1/users/abc?x=1`); it is matched against the documented path templates.
 */
export function expectConforms(doc: OpenApiDocument, method: string, path: string, status: number, body: unknown, contentType: string | undefined): void {
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
    const response = record(record(operation.node.responses)[String(status)]);
    if (Object.keys(response).length === 0) {
      throw new Error(`${where}: status ${status} is not documented for ${operation.method.toUpperCase()} ${operation.template}`);
    }
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
    schemaRef = `#/paths/${pointerEscape(operation.template)}/${operation.method}/responses/${status}/content/${pointerEscape(mediaType)}/schema`;
  }

  const validate = validatorFor(doc, schemaRef);
  const valid = validate(body);
  if (!valid) {
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
    throw new Error(`${where}: body does not match the documented schema:\n  ${errors.join('\n  ')}\nbody: ${JSON.stringify(body)}`);
  }
}

/** The same for a recorded response of `app.inject` or a parsed fetch response: takes status, Content-Type and body from it. */
export function expectResponseConforms(doc: OpenApiDocument, method: string, path: string, res: Recorded): void {
  const contentType = res.headers['content-type'];
  const body = res.body === '' ? undefined : (JSON.parse(res.body) as unknown);
  expectConforms(doc, method, path, res.statusCode, body, typeof contentType === 'string' ? contentType : undefined);
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
    ajv.addSchema({ ...doc, $id: ROOT_ID });
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

function pointerEscape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {};
}
