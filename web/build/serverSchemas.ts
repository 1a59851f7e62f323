// A Vite plugin that gives the browser the API's own zod schemas (src/routers/*/schemas.ts) without the server around them.
import path from 'node:path';
import { build, parseSync, type Plugin, type Rolldown } from 'vite';

/** The only package the schemas may still need once the bundle is tree-shaken. */
const ALLOWED_IMPORTS = new Set(['zod']);

const isBare = (id: string): boolean => !id.startsWith('.') && !path.isAbsolute(id) && !id.startsWith('\0');

/**
 * The schema modules import constants from the services beside them, and those services import the
 * database, argon2 and node:crypto. The module `entry` (a list of re-exports) is therefore bundled on
 * its own first: every package is left external and treated as free of side effects, so the imports
 * no schema uses vanish, and the server modules keep only the statements the schemas need. If anything
 * but zod is still imported afterwards, a schema really needs server code and the build stops, naming it.
 */
export function serverSchemas(entry: string): Plugin {
  const entryPath = path.resolve(entry);
  return {
    name: 'agent-org:server-schemas',
    async load(id) {
      if (id !== entryPath) return null;
      const result = await build({
        configFile: false,
        logLevel: 'silent',
        build: {
          write: false,
          minify: false,
          lib: { entry: entryPath, formats: ['es'], fileName: 'schemas' },
          rolldownOptions: { external: isBare, treeshake: { moduleSideEffects: false } },
        },
      });
      const chunk = (Array.isArray(result) ? result : [result])
        .flatMap((r) => ('output' in r ? r.output : []))
        .find((o): o is Rolldown.OutputChunk => o.type === 'chunk' && o.isEntry);
      if (!chunk) throw new Error(`server-schemas: bundling ${entry} produced no entry chunk`);
      const serverOnly = importsOf(chunk.code).filter((i) => !ALLOWED_IMPORTS.has(i));
      if (serverOnly.length > 0) {
        throw new Error(`server-schemas: the schemas of ${entry} need server-only modules at runtime: ${serverOnly.join(', ')}`);
      }
      for (const file of chunk.moduleIds) if (path.isAbsolute(file)) this.addWatchFile(file);
      return { code: chunk.code, moduleSideEffects: false };
    },
  };
}

/** The modules `code` still imports (the chunk's `imports` also lists externals whose every import was dropped). */
function importsOf(code: string): string[] {
  const { program } = parseSync('schemas.js', code);
  return program.body.flatMap((node) => {
    if (node.type === 'ImportDeclaration' || node.type === 'ExportAllDeclaration') return [node.source.value];
    if (node.type === 'ExportNamedDeclaration' && node.source) return [node.source.value];
    return [];
  });
}
