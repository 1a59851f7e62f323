// Vite configuration of the dashboard: Preact, precompressed fingerprinted assets.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { precompress } from './build/precompress.ts';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here('.'),
  // Preact's automatic JSX runtime; no compat layer, no React.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  plugins: [precompress()],
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    // Every browser the dashboard supports has modulepreload; the polyfill would be dead code.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    // Brotli at its best quality takes a second or two on a busy machine; that is expected, not a warning.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  server: {
    // `npm run web:dev`: the UI from Vite with hot reload, the API from a running service.
    proxy: { '/api': { target: process.env.AGENT_ORG_URL ?? 'http://127.0.0.1:8000' } },
  },
});
