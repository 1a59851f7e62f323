// Real-browser tests: Debian's Chromium driven by playwright-core against the service listening on a real port.
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { AxeResults, Result } from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { REFRESH_COOKIE_PATH } from '../../src/routers/auth/cookies.ts';
import { startTestService, type TestService } from './service.ts';
import { createUser, type TestUser } from './users.ts';

/** The system's Chromium (`apt-get install chromium`); playwright-core never downloads a browser. */
export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

export type ServedService = TestService & { origin: string };

/**
 * The real service on a fresh database, listening on a free local port (the browser needs a real socket).
 * Its close() waits briefly for the live-event streams of closed pages to end, and cuts the browser's connections: Chromium keeps sockets open (keep-alive, preconnects)
 * that would otherwise hold the server's close until they time out.
 */
export async function startServedService(opts: Parameters<typeof startTestService>[0] = {}): Promise<ServedService> {
  const svc = await startTestService(opts);
  try {
    const origin = await svc.app.listen({ port: 0, host: '127.0.0.1' });
    return {
      ...svc,
      origin,
      async close() {
        // Pages follow live events: let the streams of closed pages end first (bounded), so that shutting
        // down does not race a stream that is still being opened.
        for (const until = Date.now() + 5000; svc.deps.events.openStreams > 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
        const closing = svc.close();
        svc.app.server.closeAllConnections();
        await closing;
      },
    };
  } catch (error) {
    await svc.close();
    throw error;
  }
}

/** What most dashboard files start with: a served service with rate limits off (tests sign in often), Chromium, and a CEO. */
export type Dashboard = { svc: ServedService; browser: Browser; ceo: TestUser };

export async function startDashboard(opts: { ceoUsername?: string } = {}): Promise<Dashboard> {
  const [svc, browser] = await Promise.all([startServedService({ env: { RATE_LIMITS_ENABLED: 'false' } }), launchChromium()]);
  // Before a CEO exists every page is first-run setup.
  const ceo = await createUser(svc, { role: 'ceo', ...(opts.ceoUsername ? { username: opts.ceoUsername } : {}) });
  return { svc, browser, ceo };
}

/** Closes the browser first, so no open page holds a connection the service's close waits for. */
export async function closeDashboard(dashboard: Partial<Dashboard>): Promise<void> {
  await dashboard.browser?.close();
  await dashboard.svc?.close();
}

/**
 * A browser context holding `user`'s session cookies, as login would have set them (same names and
 * paths, CONTRACT §3.2), so tests that are not about signing in skip the form.
 */
export async function signedInContext(browser: Browser, origin: string, user: TestUser, opts: { width?: number } = {}): Promise<BrowserContext> {
  const context = await newContext(browser, opts);
  const { hostname } = new URL(origin);
  const cookie = { domain: hostname, sameSite: 'Strict' as const, secure: false };
  await context.addCookies([
    { ...cookie, name: 'session', value: user.token, path: '/api', httpOnly: true },
    { ...cookie, name: 'csrf_token', value: user.csrfToken, path: '/', httpOnly: false },
    { ...cookie, name: 'refresh_token', value: user.refreshToken, path: REFRESH_COOKIE_PATH, httpOnly: true },
  ]);
  return context;
}

export function newContext(browser: Browser, opts: { width?: number } = {}): Promise<BrowserContext> {
  return browser.newContext({ viewport: { width: opts.width ?? 1100, height: 800 }, reducedMotion: 'reduce' });
}

/**
 * Collects what the page reports as broken: uncaught exceptions, console errors (a CSP violation is one)
 * and failed requests other than the 4xx answers the tests provoke on purpose; and the page's API calls.
 */
export function watchProblems(page: Page): { errors: string[]; calls: () => string } {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // A refused call is logged by Chromium as "Failed to load resource: ... 4xx"; the tests check those answers themselves.
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  // The page's API calls and how each ended, for the message of a test that timed out waiting on the page.
  const calls: string[] = [];
  page.on('request', (r) => {
    if (!r.url().includes('/api/')) return;
    const started = Date.now();
    const line = `${r.method()} ${new URL(r.url()).pathname}`;
    const index = calls.push(`${line} (no answer yet)`) - 1;
    void r.response().then(
      (res) => (calls[index] = `${line} → ${String(res?.status() ?? 'none')} in ${String(Date.now() - started)} ms`),
      () => (calls[index] = `${line} → failed`),
    );
  });
  return { errors, calls: () => calls.join('\n') };
}

const require = createRequire(import.meta.url);
let axeSource: Promise<string> | undefined;

/** axe-core's serious and critical violations on the current page (WCAG 2.x A/AA rules and best practices). */
export async function seriousViolations(page: Page): Promise<Result[]> {
  axeSource ??= fs.readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (no script element is added).
  await page.evaluate(await axeSource);
  const results = await page.evaluate<AxeResults>('axe.run(document, { resultTypes: ["violations"] })');
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A readable summary of violations for assertion messages. */
export function describeViolations(violations: readonly Result[]): string {
  return violations.map((v) => `${v.id} (${v.impact ?? '?'}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`).join('\n');
}

/** Saves a PNG when SCREENSHOT_DIR is set (how docs/*.png are made: see README, "Developing the UI"). */
export async function snap(page: Page, name: string): Promise<void> {
  const dir = process.env.SCREENSHOT_DIR;
  if (!dir) return;
  await fs.mkdir(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

/** Horizontal overflow of the document in CSS pixels (0 when nothing scrolls sideways). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}
