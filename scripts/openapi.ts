// Writes the OpenAPI document to .data/openapi.json for `redocly lint`, without a server or a database.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../src/rest/openapi/document.ts';

// The linted document must not depend on PUBLIC_URL, so every run (and CI) lints the same text.
const PUBLIC_URL = 'http://127.0.0.1:8000';

const root = fileURLToPath(new URL('..', import.meta.url));
const target = path.join(root, '.data', 'openapi.json');
await fs.mkdir(path.dirname(target), { recursive: true });
await fs.writeFile(target, `${JSON.stringify(buildOpenApiDocument(PUBLIC_URL), null, 2)}\n`);
console.log(`wrote ${path.relative(process.cwd(), target) || target}`);
