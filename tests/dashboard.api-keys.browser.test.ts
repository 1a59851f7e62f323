// API keys and service accounts in Chromium (CONTRACT §3.5, §4.9): a key's secret shown once and copied, used
// against the REST API, revoked; the CEO's view of every key and keys for service accounts; service accounts on the
// users page; the password policy in the hints; 375 px, axe.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDashboard, describeViolations, horizontalOverflow, seriousViolations, signedInContext, snap, startDashboard, watchProblems, type ServedService } from './helpers/browser.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const SLOW = 90_000;
const DAY_MS = 24 * 60 * 60 * 1000;

let svc: ServedService;
let browser: Browser;
let ceo: TestUser;
let manager: TestUser;
let pair: TestUser;
let observer: TestUser;
beforeAll(async () => {
  ({ svc, browser, ceo } = await startDashboard({ ceoUsername: 'ceo' }));
  manager = await createUser(svc, { role: 'manager', username: 'mia' });
  pair = await createUser(svc, { role: 'pair_programmer', username: 'pat' });
  observer = await createUser(svc, { role: 'observer', username: 'olga' });
}, SLOW);
afterAll(() => closeDashboard({ svc, browser }), SLOW);

type Opened = { page: Page; context: BrowserContext; errors: string[] };

async function open(user: TestUser, path: string, width?: number): Promise<Opened> {
  const context = await signedInContext(browser, svc.origin, user, width === undefined ? {} : { width });
  // The copy button writes to the clipboard; the test reads it back.
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.origin });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const { errors } = watchProblems(page);
  await page.goto(`${svc.origin}${path}`);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).not.toBeNull();
  return { page, context, errors };
}

/** A REST call made with an API key, as a program would make it (never through the dashboard). */
async function rest(secret: string, path: string): Promise<{ status: number; body: { data?: unknown; error_detail?: { error_code: number; detail: string } | null } }> {
  const res = await fetch(`${svc.origin}/api/v1${path}`, { headers: { authorization: `Bearer ${secret}`, accept: 'application/json' } });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : JSON.parse(text) };
}

const keyCard = (page: Page, name: string) => page.getByRole('list', { name: 'API keys' }).getByRole('article', { name, exact: true });
const keyForm = (page: Page) => page.getByRole('form', { name: 'Create an API key' });
const secretPanel = (page: Page) => page.getByRole('region', { name: /^API key “.*” created/ });

/** The local calendar day `days` from now, as a date input takes it. */
function dayFromNow(days: number): string {
  const d = new Date(Date.now() + days * DAY_MS);
  return `${String(d.getFullYear())}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** Fills and sends the create form; returns the secret the page then shows. */
async function createKey(page: Page, opts: { name: string; scopes: string[]; expires?: string; userLabel?: string }): Promise<string> {
  await page.getByRole('button', { name: 'Create an API key…' }).click();
  const form = keyForm(page);
  if (opts.userLabel !== undefined) await form.getByLabel('Key for').selectOption({ label: opts.userLabel });
  await form.getByLabel('Name').fill(opts.name);
  for (const scope of opts.scopes) await form.getByLabel(scope).check();
  if (opts.expires !== undefined) await form.getByLabel('Expires after (optional)').fill(opts.expires);
  await form.getByRole('button', { name: 'Create key' }).click();
  const code = secretPanel(page).locator('code');
  await expect.poll(() => code.count()).toBe(1);
  return (await code.textContent())?.trim() ?? '';
}

describe('a user and their own API keys', () => {
  it(
    'creates a key once (even on a double click), sees its secret once, copies it, uses it against the REST API, revokes it and sees it revoked',
    async () => {
      const { page, errors } = await open(manager, '/api-keys');
      await page.getByRole('button', { name: 'Create an API key…' }).click();
      const form = keyForm(page);
      // Only the CEO issues keys for someone else.
      expect(await form.getByLabel('Key for').count()).toBe(0);
      await form.getByLabel('Name').fill('deploy job');
      await form.getByRole('button', { name: 'Create key' }).click();
      await expect.poll(() => form.getByText('Choose at least one scope.').count()).toBe(1);
      for (const scope of ['approvals:read', 'approvals:write']) await form.getByLabel(scope).check();
      const day = dayFromNow(30);
      await form.getByLabel('Expires after (optional)').fill(day);
      await form.getByRole('button', { name: 'Create key' }).dblclick();

      const panel = secretPanel(page);
      await expect.poll(() => panel.getByRole('heading').textContent()).toBe('API key “deploy job” created');
      const secret = (await panel.locator('code').textContent())?.trim() ?? '';
      expect(secret).toMatch(/^aok_[A-Za-z0-9_-]{43,}$/);
      expect(await panel.textContent()).toContain('Copy it now: you will not see this key again.');
      const created = (await manager.caller.apiKeys.list({})).items.filter((k) => k.name === 'deploy job');
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({ prefix: secret.slice(0, 12), scopes: ['approvals:read', 'approvals:write'], revoked_at: null });
      // The key works through the chosen day and stops at the local midnight that ends it (browser and test share the machine's zone).
      const [y, m, d] = day.split('-').map(Number);
      expect(created[0]?.expires_at).toBe(new Date(y ?? 0, (m ?? 1) - 1, (d ?? 0) + 1).toISOString());

      await panel.getByRole('button', { name: 'Copy the key' }).click();
      await expect.poll(() => panel.getByText('Copied to the clipboard.').count()).toBe(1);
      const copied = await page.evaluate<string>('navigator.clipboard.readText()');
      expect(copied).toBe(secret);

      // A program uses what was copied.
      const approvals = await rest(copied, '/approvals');
      expect(approvals.status).toBe(200);
      const me = await rest(copied, '/auth/me');
      expect(me.body.data).toMatchObject({ username: 'mia', api_key: { id: created[0]?.id, name: 'deploy job', prefix: secret.slice(0, 12) } });
      // The scopes are what was ticked: users:read was not.
      expect(await rest(copied, '/users')).toMatchObject({ status: 403, body: { error_detail: { error_code: 1001, detail: 'the API key lacks the scope users:read' } } });

      // Once hidden, the secret is nowhere on the page, and a reload does not bring it back.
      await panel.getByRole('button', { name: 'Done, hide the key' }).click();
      await expect.poll(() => secretPanel(page).count()).toBe(0);
      expect(await page.content()).not.toContain(secret);
      await page.reload();
      const card = keyCard(page, 'deploy job');
      await expect.poll(() => card.count()).toBe(1);
      expect(await page.content()).not.toContain(secret);
      expect(await card.textContent()).toContain(`${secret.slice(0, 12)}…`);
      expect(await card.getByRole('list', { name: 'Scopes of deploy job' }).getByRole('listitem').allTextContents()).toEqual(['approvals:read', 'approvals:write']);
      expect(await card.locator('dt:text-is("Last used") + dd').textContent()).not.toBe('Never');
      expect(await card.locator('.badges').textContent()).toBe('Active');

      await card.getByRole('button', { name: 'Revoke…' }).click();
      await card.getByRole('group', { name: 'Confirm revoking deploy job' }).getByRole('button', { name: 'Keep it' }).click();
      expect(await rest(secret, '/approvals')).toMatchObject({ status: 200 });
      await card.getByRole('button', { name: 'Revoke…' }).click();
      await card.getByRole('button', { name: 'Revoke the key' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toBe('API key “deploy job” revoked. Requests made with it are refused from now on.');
      await expect.poll(() => card.locator('.badges').textContent()).toBe('Revoked');
      expect(await card.locator('dt:text-is("Revoked") + dd').count()).toBe(1);
      expect(await card.getByRole('button', { name: 'Revoke…' }).count()).toBe(0);
      expect(await rest(secret, '/approvals')).toMatchObject({ status: 401, body: { error_detail: { error_code: 1002 } } });
      expect(errors).toEqual([]);
    },
    SLOW,
  );

  it(
    "anyone but the CEO sees only their own keys, without a user filter or another user's name",
    async () => {
      await pair.caller.apiKeys.create({ name: 'pat review bot', scopes: ['reviews:read', 'reviews:write'] });
      await observer.caller.apiKeys.create({ name: 'olga reader', scopes: ['approvals:read'] });
      const { page, errors } = await open(pair, '/api-keys');
      await expect.poll(() => keyCard(page, 'pat review bot').count()).toBe(1);
      expect(await keyCard(page, 'olga reader').count()).toBe(0);
      expect(await page.getByLabel('Whose keys').count()).toBe(0);
      expect(await keyCard(page, 'pat review bot').locator('dt:text-is("User")').count()).toBe(0);
      // The link in the navigation is there for everyone.
      expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).getAttribute('aria-current')).toBe('page');
      expect(errors).toEqual([]);
    },
    SLOW,
  );
});

describe("the CEO's view", () => {
  it(
    "sees every user's keys with the user's name, filters by user, and issues a key for a service account that then acts as it",
    async () => {
      const bot = await ceo.caller.users.create({ username: 'ci-bot', role: 'manager', kind: 'service' });
      await pair.caller.apiKeys.create({ name: 'pat laptop', scopes: ['reviews:read'] });
      const { page, errors } = await open(ceo, '/api-keys');
      const pats = keyCard(page, 'pat laptop');
      await expect.poll(() => pats.count()).toBe(1);
      expect((await pats.locator('dt:text-is("User") + dd').textContent())?.trim()).toBe('pat');

      const secret = await createKey(page, { name: 'ci pipeline', scopes: ['users:read', 'approvals:read'], userLabel: 'ci-bot' });
      expect(await secretPanel(page).getByRole('heading').textContent()).toBe('API key “ci pipeline” created for ci-bot');
      const [key] = (await ceo.caller.apiKeys.list({ user_id: bot.id })).items;
      expect(key).toMatchObject({ name: 'ci pipeline', user_id: bot.id, username: 'ci-bot', created_by: 'ceo', expires_at: null });
      // The key acts as the service account, with its role (manager) narrowed to the two scopes.
      expect((await rest(secret, '/auth/me')).body.data).toMatchObject({ id: bot.id, username: 'ci-bot', kind: 'service', api_key: { scopes: ['approvals:read', 'users:read'] } });
      expect((await rest(secret, '/users')).status).toBe(200);
      expect(await rest(secret, '/setup/agents')).toMatchObject({ status: 403, body: { error_detail: { detail: 'the API key lacks the scope setup:read' } } });
      await secretPanel(page).getByRole('button', { name: 'Done, hide the key' }).click();

      const bots = keyCard(page, 'ci pipeline');
      await expect.poll(() => bots.count()).toBe(1);
      expect(await bots.getByText('Service account', { exact: true }).count()).toBe(1);
      await page.getByLabel('Whose keys').selectOption({ label: 'ci-bot' });
      await expect.poll(() => new URL(page.url()).searchParams.get('user_id')).toBe(bot.id);
      await expect.poll(() => page.getByRole('list', { name: 'API keys' }).getByRole('heading').allTextContents()).toEqual(['ci pipeline']);
      // The form opened from a filtered view issues keys for that user.
      await page.getByRole('button', { name: 'Create an API key…' }).click();
      expect(await keyForm(page).getByLabel('Key for').inputValue()).toBe(bot.id);
      await keyForm(page).getByRole('button', { name: 'Cancel' }).click();
      await page.goBack();
      await expect.poll(() => pats.count()).toBe(1);
      expect(await page.getByLabel('Whose keys').inputValue()).toBe('');

      // The CEO revokes another user's key.
      await pats.getByRole('button', { name: 'Revoke…' }).click();
      await pats.getByRole('button', { name: 'Revoke the key' }).click();
      await expect.poll(() => pats.locator('.badges').textContent()).toBe('Revoked');
      expect((await pair.caller.apiKeys.list({})).items.find((k) => k.name === 'pat laptop')?.revoked_at).not.toBeNull();
      expect(errors).toEqual([]);
    },
    SLOW,
  );
});

describe('service accounts on the users page', () => {
  it(
    'the CEO creates a service account without a password; it is marked in the list and leads to issuing it a key',
    async () => {
      const { page, errors } = await open(ceo, '/users');
      await page.getByRole('button', { name: 'Add a user…' }).click();
      const form = page.getByRole('form', { name: 'Add a user' });
      expect(await form.getByLabel('Initial password').count()).toBe(1);
      await form.getByLabel('Service account').check();
      expect(await form.getByLabel('Initial password').count()).toBe(0);
      await form.getByLabel('Username').fill('reporting-bot');
      await form.getByLabel('Role').selectOption('observer');
      await form.getByRole('button', { name: 'Add user' }).dblclick();
      await expect.poll(() => page.getByRole('status').textContent()).toBe('Service account reporting-bot created. It has no password: issue it an API key.');
      const created = (await ceo.caller.users.list({ kind: 'service', limit: 200 })).items.filter((u) => u.username === 'reporting-bot');
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({ kind: 'service', role: 'observer', must_change_password: false });
      const card = page.getByRole('article', { name: 'reporting-bot', exact: true });
      await expect.poll(() => card.getByText('Service account', { exact: true }).count()).toBe(1);
      expect(await card.getByText('Must change password').count()).toBe(0);
      expect(await card.getByRole('link', { name: 'API keys of reporting-bot' }).getAttribute('href')).toBe(`/api-keys?user_id=${created[0]?.id ?? ''}`);
      // A person keeps no such badge.
      expect(await page.getByRole('article', { name: 'mia', exact: true }).getByText('Service account').count()).toBe(0);

      await page.getByRole('status').getByRole('link', { name: 'issue it an API key' }).click();
      await expect.poll(() => new URL(page.url()).pathname).toBe('/api-keys');
      await page.getByRole('button', { name: 'Create an API key…' }).click();
      expect(await keyForm(page).getByLabel('Key for').inputValue()).toBe(created[0]?.id);
      expect(errors).toEqual([]);
    },
    SLOW,
  );

  it(
    "the add-user form states the password policy, and shows the server's refusal of a common password",
    async () => {
      const { page, errors } = await open(ceo, '/users');
      await page.getByRole('button', { name: 'Add a user…' }).click();
      const form = page.getByRole('form', { name: 'Add a user' });
      const password = form.getByLabel('Initial password');
      const hint = await form.locator(`#${(await password.getAttribute('aria-describedby')) ?? ''}`).textContent();
      expect(hint).toBe('12 to 128 characters, not a commonly used password, and not containing the username. The user must replace it at first sign-in.');
      await form.getByLabel('Username').fill('quentin');
      await password.fill('Password1234');
      await form.getByRole('button', { name: 'Add user' }).click();
      await expect.poll(() => form.getByRole('alert').textContent()).toBe('password is too common');
      await password.fill('quentin-is-my-name');
      await form.getByRole('button', { name: 'Add user' }).click();
      await expect.poll(() => form.getByRole('alert').textContent()).toBe('password must not contain the username');
      expect((await ceo.caller.users.list({ limit: 200 })).items.some((u) => u.username === 'quentin')).toBe(false);
      expect(errors).toEqual([]);
    },
    SLOW,
  );
});

describe('accessibility and small screens', () => {
  it(
    'the API keys page (form open, then a new secret) and the users page fit 375 px without scrolling sideways, and axe finds no serious violation',
    async () => {
      const bot = await ceo.caller.users.create({ username: 'nightly-release-bot', role: 'pair_programmer', kind: 'service' });
      await ceo.caller.apiKeys.create({ name: 'release pipeline', scopes: ['approvals:read', 'approvals:write', 'reviews:write', 'events:read'], user_id: bot.id });
      const old = await manager.caller.apiKeys.create({ name: 'old laptop script', scopes: ['approvals:read'] });
      await manager.caller.apiKeys.revoke({ key_id: old.id });
      await observer.caller.apiKeys.create({ name: 'weekly report', scopes: ['approvals:read', 'audit:read'], expires_at: new Date(Date.now() + 90 * DAY_MS).toISOString() });
      for (const width of [375, 1100]) {
        const { page, errors } = await open(ceo, '/api-keys', width);
        await expect.poll(() => keyCard(page, 'release pipeline').count()).toBe(1);
        await page.getByRole('button', { name: 'Create an API key…' }).click();
        const form = keyForm(page);
        await form.getByRole('button', { name: 'Create key' }).click();
        await expect.poll(() => form.getByText('Choose at least one scope.').count()).toBe(1);
        expect(await horizontalOverflow(page), `form, width ${String(width)}`).toBe(0);
        let violations = await seriousViolations(page);
        expect(violations, describeViolations(violations)).toEqual([]);
        // Keyboard only: the scopes are reached and ticked with Tab and Space.
        await form.getByLabel('Name').fill(width === 375 ? 'staging runtime' : 'production runtime');
        await form.getByLabel('Name').press('Tab');
        await page.keyboard.press('Space');
        expect(await form.getByLabel('approvals:read').isChecked()).toBe(true);
        await form.getByLabel('Key for').selectOption({ label: 'nightly-release-bot' });
        await form.getByRole('button', { name: 'Create key' }).click();
        await expect.poll(() => secretPanel(page).count()).toBe(1);
        await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
        expect(await horizontalOverflow(page), `secret, width ${String(width)}`).toBe(0);
        violations = await seriousViolations(page);
        expect(violations, describeViolations(violations)).toEqual([]);
        await snap(page, width === 375 ? 'dashboard-api-keys-375' : 'dashboard-api-keys');

        await page.goto(`${svc.origin}/users`);
        await expect.poll(() => page.getByRole('article', { name: 'nightly-release-bot', exact: true }).count()).toBe(1);
        await page.getByRole('button', { name: 'Add a user…' }).click();
        await page.getByRole('form', { name: 'Add a user' }).getByLabel('Service account').check();
        expect(await horizontalOverflow(page), `users, width ${String(width)}`).toBe(0);
        violations = await seriousViolations(page);
        expect(violations, describeViolations(violations)).toEqual([]);
        expect(errors).toEqual([]);
      }
    },
    SLOW,
  );
});
