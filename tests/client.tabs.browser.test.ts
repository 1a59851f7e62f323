// Two tabs of one browser whose access token ran out at the same moment (CONTRACT §3.7, dashboard): they refresh one at a time and the session lives on.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, signedInContext, startServedService, watchProblems, type ServedService } from './helpers/browser.ts';
import { bundleClientHarness, openClientHarness, type Settled } from './helpers/clientHarness.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const SLOW = 60_000;

let svc: ServedService;
let browser: Browser;
let harnessJs: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [svc, browser, harnessJs] = await Promise.all([
    startServedService({ env: { RATE_LIMITS_ENABLED: 'false' } }),
    launchChromium(),
    bundleClientHarness(),
  ]);
  await createUser(svc, { role: 'ceo' });
}, 120_000);
afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close()));
  await browser?.close();
  await svc?.close();
}, 120_000);

async function signedIn(user: TestUser): Promise<BrowserContext> {
  const context = await signedInContext(browser, svc.origin, user);
  contexts.push(context);
  return context;
}

/** What the browser does when an access token's Max-Age passes: both cookies that carry it go; the refresh token stays. */
async function dropAccessCookies(context: BrowserContext): Promise<void> {
  await context.clearCookies({ name: 'session' });
  await context.clearCookies({ name: 'csrf_token' });
}

/** The browser still sends an access token (and its csrf_token), but the server no longer knows it: 401/1000. */
async function refuseAccessToken(context: BrowserContext): Promise<void> {
  const { hostname } = new URL(svc.origin);
  await context.addCookies([{ domain: hostname, path: '/api', name: 'session', value: 'no-such-token', httpOnly: true, secure: false, sameSite: 'Strict' }]);
}

/**
 * Holds each `auth.refresh` of the context until a second one arrives (or a while has passed), so two tabs
 * that would refresh at once really present their refresh token together, however the pages are scheduled;
 * tabs that take turns send one and wait for it. Returns how many were sent.
 */
async function holdRefreshes(context: BrowserContext): Promise<() => number> {
  let sent = 0;
  let release: (() => void) | null = null;
  let together: Promise<void> | null = null;
  await context.route('**/api/trpc/auth.refresh*', async (route) => {
    sent += 1;
    together ??= new Promise<void>((resolve) => {
      release = resolve;
      setTimeout(resolve, 1500);
    });
    if (sent >= 2) release?.();
    await together;
    await route.continue();
  });
  return () => sent;
}

/** Waits until a page has had an answer to every API call it made and made no new one for a moment. */
async function untilQuiet(problems: ReturnType<typeof watchProblems>): Promise<void> {
  let before = '';
  for (const until = Date.now() + 15_000; Date.now() < until; ) {
    const now = problems.calls();
    if (now === before && !now.includes('(no answer yet)')) return;
    before = now;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the page never settled; its API calls:\n${before}`);
}

const me = (page: Page) => page.evaluate<Settled>('harness.settle(harness.client.auth.me.query())');

describe('tabs of one browser never present the same refresh token twice (CONTRACT §3.7)', () => {
  for (const [how, expire] of [
    ['the browser dropped the access cookies', (context: BrowserContext) => dropAccessCookies(context)],
    ['the server refuses the access token the browser still sends', (context: BrowserContext) => refuseAccessToken(context)],
  ] as const) {
    it(
      `two tabs whose calls fail at the same moment refresh once and both succeed (${how})`,
      async () => {
        const user = await createUser(svc);
        const context = await signedIn(user);
        const tabs = [await openClientHarness(context, svc.origin, harnessJs), await openClientHarness(context, svc.origin, harnessJs)];
        expect((await Promise.all(tabs.map(me))).map((r) => r.ok)).toEqual([true, true]);

        await expire(context);
        const refreshes = await holdRefreshes(context);
        const results = await Promise.all(tabs.map(me));
        expect(results).toEqual([
          expect.objectContaining({ ok: true, value: expect.objectContaining({ username: user.username }) }),
          expect.objectContaining({ ok: true, value: expect.objectContaining({ username: user.username }) }),
        ]);
        // The tab that waited found the session renewed and only sent its call again.
        expect(refreshes()).toBe(1);
        expect(await Promise.all(tabs.map((t) => t.evaluate<number>('harness.sessionsLost()')))).toEqual([0, 0]);

        // The session lives on (a replay would have revoked it: 401/1002), in both tabs, with no further refresh.
        expect((await Promise.all(tabs.map(me))).map((r) => r.ok)).toEqual([true, true]);
        expect(refreshes()).toBe(1);
      },
      SLOW,
    );
  }

  it(
    'two dashboard tabs reloaded at the same moment after the access token expired both stay signed in',
    async () => {
      const user = await createUser(svc);
      const context = await signedIn(user);
      const tabs = [await context.newPage(), await context.newPage()];
      const problems = tabs.map(watchProblems);
      for (const [i, tab] of tabs.entries()) {
        tab.setDefaultTimeout(15_000);
        await tab.goto(`${svc.origin}/approvals`);
        await expect.poll(() => tab.getByRole('heading', { level: 1 }).textContent()).toBe('Approvals');
        await expect.poll(() => tab.locator('.live').textContent()).toBe('Live');
        // A page that is still loading what it shows would meet the dropped cookies with its old document.
        await untilQuiet(problems[i]!);
      }

      await dropAccessCookies(context);
      const refreshes = await holdRefreshes(context);
      await Promise.all(tabs.map((tab) => tab.reload()));
      const calls = () => problems.map((p, i) => `tab ${String(i)}:\n${p.calls()}`).join('\n');
      for (const tab of tabs) {
        await expect
          .poll(() => tab.getByRole('heading', { level: 1 }).textContent())
          .toBe('Approvals')
          .catch((error: unknown) => {
            throw new Error(`${String(error)}\nthe tabs' API calls:\n${calls()}`);
          });
        expect(new URL(tab.url()).pathname).toBe('/approvals');
      }
      expect(refreshes(), calls()).toBe(1);
      // Still signed in on the server: the cookies the tabs now hold are accepted.
      expect(await Promise.all(tabs.map((tab) => tab.evaluate(() => fetch('/api/v1/auth/me').then((r) => r.status))))).toEqual([200, 200]);
      expect(problems.flatMap((p) => p.errors)).toEqual([]);
    },
    SLOW,
  );
});
