// Generic surgery on a generated OpenAPI document, for the tools that read it: nothing here knows our routes or meta.
import type { OpenAPIObject } from 'trpc-to-openapi';
import { SCHEMA_REF, pascal, record, type Json, type Operation, type Parameter } from './nodes.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function operationsOf(doc: OpenAPIObject): Operation[] {
  return Object.values(doc.paths ?? {}).flatMap((item) => METHODS.flatMap((method) => item[method] ?? []));
}

/**
 * A query string cannot say `null`: an optional query parameter is plain optional in the document, whatever
 * the procedure accepts from other transports (orval would otherwise send `?limit=null`).
 */
export function plainOptionalParameters(doc: OpenAPIObject): void {
  for (const operation of operationsOf(doc)) if (operation.parameters) operation.parameters = operation.parameters.map(plainOptional);
}

function plainOptional(parameter: Parameter): Parameter {
  if ('$ref' in parameter || parameter.schema === undefined || '$ref' in parameter.schema) return parameter;
  const { anyOf, ...rest } = parameter.schema;
  if (anyOf === undefined) return parameter;
  const others = anyOf.filter((s) => '$ref' in s || s.type !== 'null');
  if (others.length === anyOf.length) return parameter;
  const [only] = others;
  return { ...parameter, schema: others.length === 1 && only !== undefined ? { ...only, ...rest } : { ...rest, anyOf: others } };
}

/**
 * A request field's default, said in words instead of `default`: openapi-typescript (7.x, `defaultNonNullable`
 * on by default) types a field with a `default` as required, so generated clients would have to send what the
 * server fills in anyway (openapi-ts/openapi-typescript#1741, #2012).
 */
export function defaultsInProse(doc: OpenAPIObject): void {
  const schemas: Record<string, unknown> = doc.components?.schemas ?? {};
  for (const operation of operationsOf(doc)) {
    const target = record(record(record(record(operation.requestBody).content)['application/json']).schema).$ref;
    if (typeof target !== 'string' || !target.startsWith(SCHEMA_REF)) continue;
    const name = target.slice(SCHEMA_REF.length);
    if (name in schemas) schemas[name] = withDefaultsInProse(record(schemas[name]));
  }
}

function withDefaultsInProse(schema: Json): Json {
  const properties = record(schema.properties);
  for (const [field, value] of Object.entries(properties)) {
    const property = record(value);
    if (!('default' in property)) continue;
    const { default: fallback, ...rest } = property;
    const said = `Default: \`${JSON.stringify(fallback)}\`.`;
    properties[field] = { ...rest, description: typeof rest.description === 'string' ? `${rest.description} ${said}` : said };
  }
  return Object.keys(properties).length === 0 ? schema : { ...schema, properties };
}

/**
 * trpc-to-openapi registers error schemas for responses we replace, and zod-openapi names the output
 * variant of a registered schema `<Name>Output`; drop what nothing references and give the survivors
 * their plain names, so the document lists only what the API really sends.
 */
export function pruneSchemas(doc: OpenAPIObject): void {
  const schemas = doc.components?.schemas;
  if (!schemas) return;
  const reachable = reachableSchemas(doc, { ...doc, components: { ...doc.components, schemas: {} } });
  for (const name of Object.keys(schemas)) if (!reachable.has(name)) Reflect.deleteProperty(schemas, name);
  const renames = new Map<string, string>();
  for (const name of Object.keys(schemas)) {
    const plain = name.endsWith('Output') ? name.slice(0, -'Output'.length) : name;
    if (plain !== name && plain !== '' && !(plain in schemas)) renames.set(name, plain);
  }
  if (renames.size === 0) return;
  for (const [from, to] of renames) {
    const schema = schemas[from];
    if (schema === undefined) continue;
    schemas[to] = schema;
    Reflect.deleteProperty(schemas, from);
  }
  rewriteRefs(doc, renames);
}

/**
 * Decision (docs/foundation.md): response schemas are open. zod-openapi closes every output object
 * (`additionalProperties: false`), so a strict client validator would reject a response the day a field is
 * added; clients are told to ignore unknown fields instead. Request bodies stay closed: the server refuses
 * unknown fields.
 */
export function openResponseSchemas(doc: OpenAPIObject): void {
  const schemas = doc.components?.schemas ?? {};
  const inRequests = new Set<string>();
  const inResponses = new Set<string>();
  for (const operation of operationsOf(doc)) {
    for (const name of reachableSchemas(doc, operation.requestBody)) inRequests.add(name);
    for (const name of reachableSchemas(doc, [operation.responses, doc.components?.responses])) inResponses.add(name);
    openObjects(operation.responses);
  }
  for (const name of inResponses) {
    if (inRequests.has(name)) continue;
    openObjects(schemas[name]);
  }
}

function openObjects(node: unknown): void {
  if (Array.isArray(node)) for (const item of node) openObjects(item);
  else if (typeof node === 'object' && node !== null) {
    if ('additionalProperties' in node && node.additionalProperties === false) Reflect.deleteProperty(node, 'additionalProperties');
    for (const value of Object.values(node)) openObjects(value);
  }
}

/**
 * hey-api and orval name types after the operationId (`<OperationId>Response`, `…Data`, `…Errors`, `…Body`, `…Params`):
 * one that equals a schema's name makes them rename one of the two (`SetupStatusResponse2`).
 */
const GENERATED_SUFFIXES = ['', 'Data', 'Response', 'Responses', 'Error', 'Errors', 'Body', 'Params'];

export function assertNoGeneratedNameClashes(doc: OpenAPIObject): void {
  const schemaNames = new Set(Object.keys(doc.components?.schemas ?? {}).map((n) => n.toLowerCase()));
  for (const { operationId: id } of operationsOf(doc)) {
    if (id === undefined) continue;
    const base = id.split(/[_\W]+/).map(pascal).join('');
    for (const suffix of GENERATED_SUFFIXES) {
      if (schemaNames.has(`${base}${suffix}`.toLowerCase())) {
        throw new Error(`operationId ${id} clashes with schema ${base}${suffix} in generated clients; give the procedure an openapi.operationId`);
      }
    }
  }
}

function reachableSchemas(doc: OpenAPIObject, from: unknown): Set<string> {
  const schemas = doc.components?.schemas ?? {};
  const reachable = new Set<string>();
  const queue = refsIn(from);
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (reachable.has(name)) continue;
    reachable.add(name);
    queue.push(...refsIn(schemas[name]));
  }
  return reachable;
}

function refsIn(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) refsIn(item, found);
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)) found.push(value.slice(SCHEMA_REF.length));
      else refsIn(value, found);
    }
  }
  return found;
}

function rewriteRefs(node: unknown, renames: Map<string, string>): void {
  if (Array.isArray(node)) for (const item of node) rewriteRefs(item, renames);
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)) {
        const renamed = renames.get(value.slice(SCHEMA_REF.length));
        if (renamed !== undefined) Reflect.set(node, key, SCHEMA_REF + renamed);
      } else rewriteRefs(value, renames);
    }
  }
}
