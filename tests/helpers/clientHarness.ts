// The typed client factory (src/client) on pages of the service's origin: web/tests/fixtures/clientHarness.ts bundled for the browser.
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { build, type Rolldown } from 'vite';

/** What `harness.settle` turns a call into: plain JSON the test reads back through the DevTools protocol. */
export type Settled = { ok: true; value: unknown; undefined: boolean } | { ok: false; status: number | null; code: number | null };

/** web/tests/fixtures/clientHarness.ts bundled for the browser, as the dashboard's build bundles the client. */
export async function bundleClientHarness(): Promise<string> {
  const entry = fileURLToPath(new URL('../../web/tests/fixtures/clientHarness.ts', import.meta.url));
  const result = await build({ configFile: false, logLevel: 'silent', build: { write: false, minify: false, lib: { entry, formats: ['es'], fileName: 'harness' } } });
  const chunk = (Array.isArray(result) ? result : [result])
    .flatMap((r) => ('output' in r ? r.output : []))
    .find((o): o is Rolldown.OutputChunk => o.type === 'chunk' && o.isEntry);
  if (!chunk) throw new Error('the harness did not bundle');
  return chunk.code;
}

/**
 * A new page of `context` at the service's origin (served by the test, not the service) running the
 * harness, once `globalThis.harness` exists.
 */
export async function openClientHarness(context: BrowserContext, origin: string, harnessJs: string): Promise<Page> {
  const page = await context.newPage();
  await page.route(`${origin}/__harness/**`, (route) =>
    route.fulfill(
      route.request().url().endsWith('.js')
        ? { contentType: 'text/javascript', body: harnessJs }
        : { contentType: 'text/html', body: '<!doctype html><title>harness</title><script type="module" src="/__harness/harness.js"></script>' },
    ),
  );
  await page.goto(`${origin}/__harness/index.html`);
  await page.waitForFunction('globalThis.harness !== undefined');
  return page;
}
