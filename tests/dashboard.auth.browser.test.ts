// The dashboard in Chromium: first-run setup, sign-in, the forced password change, sessions, a lost session, sign-out, rate limits.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeViolations, launchChromium, newContext, seriousViolations, signedInContext, snap, startServedService, watchProblems, type ServedService } from './helpers/browser.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const SLOW = 60_000;

let browser: Browser;
// Closed before each describe's service, so no open page holds a connection the service waits for.
const contexts: BrowserContext[] = [];
beforeAll(async () => {
  browser = await launchChromium();
}, SLOW);
afterAll(() => browser?.close());

async function closeContexts(): Promise<void> {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
}

/** A fresh browser context, signed in as `as.user` when given. */
async function context(as?: { origin: string; user: TestUser }): Promise<BrowserContext> {
  const c = as === undefined ? await newContext(browser) : await signedInContext(browser, as.origin, as.user);
  contexts.push(c);
  return c;
}

async function openPage(origin: string, path: string): Promise<{ page: Page; problems: ReturnType<typeof watchProblems> }> {
  const page = await (await context()).newPage();
  page.setDefaultTimeout(15_000);
  const problems = watchProblems(page);
  await page.goto(`${origin}${path}`);
  return { page, problems };
}

describe('first-run setup (no CEO yet)', () => {
  let svc: ServedService;
  beforeAll(async () => {
    svc = await startServedService();
  }, SLOW);
  afterAll(async () => {
    await closeContexts();
    await svc?.close();
  }, SLOW);

  it(
    'creates the CEO from a form that checks what the API checks, then opens the wizard',
    async () => {
      const { page, problems } = await openPage(svc.origin, '/approvals');
      await page.waitForURL('**/first-run');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Welcome to agent-org');
      const setups: string[] = [];
      page.on('request', (r) => void (r.url().includes('auth.setup') && setups.push(r.url())));

      await page.getByLabel('Username').fill('boss');
      await page.getByLabel('Password', { exact: true }).fill('short');
      await page.getByLabel('Repeat the password').fill('short');
      await page.getByRole('button', { name: 'Create the CEO account' }).click();
      await expect.poll(() => page.getByText('At least 12 characters.').count()).toBe(1);
      await page.getByLabel('Password', { exact: true }).fill('a long enough password');
      await page.getByRole('button', { name: 'Create the CEO account' }).click();
      await expect.poll(() => page.getByText('The two passwords differ.').count()).toBe(1);
      expect(setups).toEqual([]);

      await page.getByLabel('Repeat the password').fill('a long enough password');
      await page.getByRole('button', { name: 'Create the CEO account' }).click();
      await page.waitForURL('**/setup').catch(async (error: unknown) => {
        const shown = await page.locator('body').innerText({ timeout: 1000 }).catch(() => '(unreadable)');
        throw new Error(`${String(error)}\nthe page's API calls:\n${problems.calls()}\nthe page shows:\n${shown}`);
      });
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Set up your organization');
      expect(setups).toHaveLength(1);
      expect(await svc.caller().setup.status()).toMatchObject({ needs_admin: false });
      expect(problems.errors).toEqual([]);
    },
    SLOW,
  );
});

describe('signing in, sessions and signing out', () => {
  let svc: ServedService;
  beforeAll(async () => {
    // Several tests sign in from 127.0.0.1 within a minute; the per-IP login window would otherwise refuse the later ones.
    svc = await startServedService({ env: { RATE_LIMITS: JSON.stringify({ 'auth.login': { limit: 1000, window_s: 60 } }) } });
    await createUser(svc, { role: 'ceo' });
  }, SLOW);
  afterAll(async () => {
    await closeContexts();
    await svc?.close();
  }, SLOW);

  async function signIn(page: Page, username: string, password: string) {
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  it(
    "login shows the server's detail for a wrong password, then signs in and goes where the user was headed",
    async () => {
      const user = await createUser(svc, { role: 'manager' });
      const { page, problems } = await openPage(svc.origin, '/users');
      await page.waitForURL('**/login?next=%2Fusers');
      const violations = await seriousViolations(page);
      expect(violations, describeViolations(violations)).toEqual([]);
      await snap(page, 'dashboard-login');

      await signIn(page, user.username, 'not the password');
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('invalid username or password');
      await signIn(page, user.username, user.password);
      await page.waitForURL('**/users');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Users');
      expect(problems.errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'a user with an initial password must choose their own before anything else',
    async () => {
      const user = await createUser(svc, { role: 'manager', mustChangePassword: true });
      const { page, problems } = await openPage(svc.origin, '/login');
      await signIn(page, user.username, user.password);
      await page.waitForURL('**/change-password');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Choose your own password');
      await page.goto(`${svc.origin}/approvals`);
      await page.waitForURL('**/change-password');

      // The server's rule (new ≠ current) is not the form's: its detail is shown as sent.
      await page.getByLabel('Current password').fill(user.password);
      await page.getByLabel('New password', { exact: true }).fill(user.password);
      await page.getByLabel('Repeat the new password').fill(user.password);
      await page.getByRole('button', { name: 'Change password' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('new password must differ from the current one');

      await page.getByLabel('New password', { exact: true }).fill('my very own password');
      await page.getByLabel('Repeat the new password').fill('my very own password');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.waitForURL('**/approvals');
      expect(problems.errors).toEqual([]);
    },
    SLOW,
  );

  it(
    "lists the user's sessions and revokes another one",
    async () => {
      const user = await createUser(svc); // session 1, user agent "vitest"
      const { page, problems } = await openPage(svc.origin, '/login');
      await signIn(page, user.username, user.password); // session 2, this browser
      await page.waitForURL('**/approvals');
      await page.getByRole('link', { name: 'Sessions' }).click();
      const cards = page.getByRole('list', { name: 'Sessions' }).getByRole('listitem');
      await expect.poll(() => cards.count()).toBe(2);
      await expect.poll(() => cards.filter({ hasText: 'This session' }).count()).toBe(1);
      await cards.filter({ hasText: 'vitest' }).getByRole('button').click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Session revoked.' }).count()).toBe(1);
      await expect.poll(() => cards.count()).toBe(1);
      await expect(user.caller.auth.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      expect(problems.errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'a session revoked elsewhere returns the browser to the login page with a notice, by itself and without a reload',
    async () => {
      const user = await createUser(svc);
      const page = await (await context({ origin: svc.origin, user })).newPage();
      const problems = watchProblems(page);
      await page.goto(`${svc.origin}/approvals`);
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Approvals');
      await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
      await page.evaluate('window.notReloaded = true');

      // The live stream ends with 401/1002; the one refresh fails; the page shows sign-in without being touched.
      await user.caller.auth.revokeSession({ session_id: user.sessionId });
      await page.waitForURL('**/login?next=%2Fapprovals');
      await expect.poll(() => page.getByRole('status').textContent()).toBe('Your session has ended. Sign in again to continue.');
      expect(await page.evaluate<boolean>('window.notReloaded === true')).toBe(true);
      expect(problems.errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'sign out ends the session on the server and shows the login page',
    async () => {
      const user = await createUser(svc);
      const page = await (await context({ origin: svc.origin, user })).newPage();
      await page.goto(`${svc.origin}/status`);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL('**/login');
      await expect(user.caller.auth.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    },
    SLOW,
  );

  it(
    'the login throttle (429) says when to try again',
    async () => {
      const user = await createUser(svc);
      // Ten failures from this address (the browser's too) for this name; the eleventh is refused (CONTRACT §3.4).
      for (let i = 0; i < 10; i++) {
        const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: `wrong ${String(i)}` } });
        expect(res.statusCode).toBe(401);
      }
      const { page } = await openPage(svc.origin, '/login');
      await signIn(page, user.username, user.password);
      const alert = page.getByRole('alert');
      await expect.poll(() => alert.textContent()).toMatch(/Try again in \d+ (seconds?|minutes)\.$/);
      await expect.poll(() => page.url()).toMatch(/\/login$/);
    },
    SLOW,
  );
});
