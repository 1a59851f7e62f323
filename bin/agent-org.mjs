#!/usr/bin/env node
// Launcher in plain JavaScript, so an old Node (which cannot even parse TypeScript) still gets a clear message.
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(
    `agent-org needs Node.js 22 or newer (found ${process.versions.node}). Run it through npm (\`npm start\`), which uses the project's own Node 24.`,
  );
  process.exit(1);
}
// Enabled before the first TypeScript module loads: with a warm cache Node then skips type stripping
// altogether and never loads its stripper and the resident memory it takes, which src/main.ts alone
// could not avoid (docs/foundation.md#measured-reasons-behind-the-code).
const { enableCompileCache } = await import('node:module');
enableCompileCache();
await import('../src/main.ts');
