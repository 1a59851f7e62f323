// The OpenAPI 3.1 document: trpc-to-openapi's output, each route described from its meta, then the generic passes.
import { readFileSync } from 'node:fs';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { restRouter } from '../../routers/index.ts';
import { SERVICE_VERSION } from '../../version.ts';
import { API_PREFIX, routeTable } from '../routeTable.ts';
import { SECURITY_SCHEMES, SHARED_SCHEMAS, sharedComponents } from './components.ts';
import { describeRoute, tagsOf } from './derive.ts';
import { assertNoGeneratedNameClashes, defaultsInProse, openResponseSchemas, plainOptionalParameters, pruneSchemas } from './postprocess.ts';

/** info.description, Markdown; `{PUBLIC_URL}` stands for the configured public URL. */
const DESCRIPTION = readFileSync(new URL('./description.md', import.meta.url), 'utf8').trimEnd();

export function buildOpenApiDocument(publicUrl: string): OpenAPIObject {
  const doc = generateOpenApiDocument(restRouter, {
    title: 'agent-org API',
    description: DESCRIPTION.replaceAll('{PUBLIC_URL}', publicUrl),
    version: SERVICE_VERSION,
    openApiVersion: '3.1.0',
    baseUrl: `${publicUrl}${API_PREFIX}`,
    docsUrl: `${publicUrl}/docs`,
    securitySchemes: { ...SECURITY_SCHEMES },
    defs: SHARED_SCHEMAS,
  });
  const components = Object.assign((doc.components ??= {}), sharedComponents());
  const schemas = (components.schemas ??= {});
  for (const route of routeTable) describeRoute(doc, schemas, route);
  doc.tags = tagsOf(routeTable);

  plainOptionalParameters(doc);
  defaultsInProse(doc);
  pruneSchemas(doc);
  openResponseSchemas(doc);
  assertNoGeneratedNameClashes(doc);
  return doc;
}
