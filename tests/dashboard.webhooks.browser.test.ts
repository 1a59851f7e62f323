// The webhooks page in Chromium (CONTRACT §4.12, §4.9): the CEO creates a webhook (its secret shown once, copied,
// and verifying what a local receiver gets), sends a test and sees it succeed, redelivers it, edits the event types,
// rotates the secret, disables and deletes the webhook; a manager has no such page; 375 px, axe.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeViolations,
  horizontalOverflow,
  launchChromium,
  seriousViolations,
  signedInContext,
  snap,
  startServedService,
  watchProblems,
  type ServedService,
} from './helpers/browser.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const SLOW = 120_000;

type Received = { path: string; headers: IncomingHttpHeaders; body: string };

/** A receiver on 127.0.0.1 (reachable because the service runs with WEBHOOK_ALLOW_PRIVATE): records requests, answers 200 unless told otherwise. */
type Receiver = { url: string; received: Received[]; statuses: number[]; close: () => Promise<void> };

async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const statuses: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.statusCode = statuses.shift() ?? 200;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    received,
    statuses,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let svc: ServedService;
let browser: Browser;
let receiver: Receiver;
let ceo: TestUser;
let manager: TestUser;
beforeAll(async () => {
  [svc, browser, receiver] = await Promise.all([
    // Retries a minute apart: a failed attempt stays on the page as retrying (the screenshot shows one).
    startServedService({ env: { RATE_LIMITS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_S: '60' } }),
    launchChromium(),
    startReceiver(),
  ]);
  ceo = await createUser(svc, { role: 'ceo', username: 'ceo' });
  manager = await createUser(svc, { role: 'manager', username: 'mia' });
}, SLOW);
afterAll(async () => {
  await browser.close();
  await svc.close();
  await receiver.close();
}, SLOW);

type Opened = { page: Page; context: BrowserContext; errors: string[] };

async function open(user: TestUser, path: string, width?: number): Promise<Opened> {
  const context = await signedInContext(browser, svc.origin, user, width === undefined ? {} : { width });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.origin });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const { errors } = watchProblems(page);
  await page.goto(`${svc.origin}${path}`);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).not.toBeNull();
  return { page, context, errors };
}

const card = (page: Page, url: string) => page.getByRole('list', { name: 'Webhooks' }).getByRole('article', { name: url, exact: true });
const createForm = (page: Page) => page.getByRole('form', { name: 'Create a webhook' });
const secretPanel = (page: Page) => page.getByRole('region', { name: /created$|^New signing secret/ });
const deliveries = (page: Page, url: string) => card(page, url).getByRole('list', { name: `Deliveries to ${url}` }).getByRole('article');
const at = (path: string) => receiver.received.filter((r) => r.path === path);

/** The receiver's check, with the standardwebhooks package unchanged: throws unless signed with `secret`. */
function verify(secret: string, r: Received): unknown {
  const header = (name: string) => String(r.headers[name] ?? '');
  return new Webhook(secret).verify(r.body, { 'webhook-id': header('webhook-id'), 'webhook-timestamp': header('webhook-timestamp'), 'webhook-signature': header('webhook-signature') });
}

describe('the CEO manages a webhook', () => {
  it(
    'creates it once (secret shown once, copied), sends a test the receiver verifies, sees it succeed, redelivers it, receives a real event, edits, rotates, disables and deletes',
    async () => {
      const url = `${receiver.url}/flow`;
      const { page, errors } = await open(ceo, '/webhooks');
      expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).getAttribute('aria-current')).toBe('page');
      await page.getByRole('button', { name: 'Create a webhook…' }).click();
      const form = createForm(page);
      await form.getByRole('button', { name: 'Create webhook' }).click();
      await expect.poll(() => form.getByText('Choose at least one event type.').count()).toBe(1);
      expect(await form.locator('.field-error').first().textContent()).toBe('Required.');
      await form.getByLabel('URL').fill(url);
      await form.getByRole('group', { name: 'Approvals' }).getByLabel('approvals.*').check();
      await form.getByRole('group', { name: 'Users' }).getByLabel('user.created').check();
      await form.getByLabel('Description (optional)').fill('The release channel');
      await form.getByRole('button', { name: 'Create webhook' }).dblclick();

      const panel = secretPanel(page);
      await expect.poll(() => panel.getByRole('heading').textContent()).toBe(`Webhook for ${url} created`);
      const secret = (await panel.locator('code').textContent())?.trim() ?? '';
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
      expect(await panel.textContent()).toContain('Copy the signing secret now: you will not see it again.');
      const listed = (await ceo.caller.webhooks.list({})).items.filter((w) => w.url === url);
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({ event_types: ['approvals.*', 'user.created'], description: 'The release channel', enabled: true, created_by: 'ceo' });
      const id = listed[0]?.id ?? '';
      await panel.getByRole('button', { name: 'Copy the secret' }).click();
      await expect.poll(() => panel.getByText('Copied to the clipboard.').count()).toBe(1);
      expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
      await panel.getByRole('button', { name: 'Done, hide the secret' }).click();
      await expect.poll(() => secretPanel(page).count()).toBe(0);
      expect(await page.content()).not.toContain(secret);
      await page.reload();
      const hook = card(page, url);
      await expect.poll(() => hook.count()).toBe(1);
      expect(await page.content()).not.toContain(secret);
      expect(await hook.getByRole('list', { name: `Event types of ${url}` }).getByRole('listitem').allTextContents()).toEqual(['approvals.*', 'user.created']);
      expect(await hook.locator('.badges').textContent()).toBe('Enabled');

      // A test: the receiver verifies it with the copied secret; the page shows it succeed.
      await hook.getByRole('button', { name: 'Send a test' }).click();
      await expect.poll(() => at('/flow').length, { timeout: 15_000 }).toBe(1);
      const test = at('/flow')[0];
      expect(verify(secret, test ?? { path: '', headers: {}, body: '' })).toMatchObject({ type: 'webhook.test', channel: 'webhooks', actor: 'ceo', data: { webhook_id: id } });
      const row = deliveries(page, url).first();
      await expect.poll(() => row.locator('.badge').textContent(), { timeout: 15_000 }).toBe('Succeeded');
      expect(await row.locator('code').textContent()).toBe('webhook.test');
      expect(await row.locator('dt:text-is("Attempts") + dd').textContent()).toBe('1');
      expect(await row.locator('dt:text-is("Response") + dd').textContent()).toBe('HTTP 200');

      // Redelivered: the same delivery (same webhook-id) once more, counted.
      await row.getByRole('button', { name: /^Redeliver/ }).click();
      await expect.poll(() => at('/flow').length, { timeout: 15_000 }).toBe(2);
      expect(at('/flow')[1]?.headers['webhook-id']).toBe(test?.headers['webhook-id']);
      await expect.poll(() => row.locator('dt:text-is("Attempts") + dd').textContent(), { timeout: 15_000 }).toBe('2');

      // A failed attempt shows its error.
      receiver.statuses.push(500);
      await row.getByRole('button', { name: /^Redeliver/ }).click();
      await expect.poll(() => row.locator('dt:text-is("Error") + dd').textContent(), { timeout: 15_000 }).toBe('HTTP 500');
      expect(await row.locator('dt:text-is("Response") + dd').textContent()).toBe('HTTP 500');

      // A real event, delivered as it happens.
      await manager.caller.approvals.create({ action_type: 'deploy:production', title: 'Ship it', description: 'Release 9', risk_level: 'high' });
      await expect.poll(() => at('/flow').some((r) => r.body.includes('"approval.created"')), { timeout: 15_000 }).toBe(true);
      await expect.poll(() => deliveries(page, url).locator('code').allTextContents(), { timeout: 15_000 }).toContain('approval.created');

      // Edit the event types.
      await hook.getByRole('button', { name: 'Edit…' }).click();
      const edit = hook.getByRole('form', { name: `Edit the webhook for ${url}` });
      await edit.getByLabel('user.created').uncheck();
      await edit.getByLabel('review.stage_decided').check();
      await edit.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toBe(`Webhook for ${url} saved.`);
      await expect.poll(() => hook.getByRole('list', { name: `Event types of ${url}` }).getByRole('listitem').allTextContents()).toEqual(['approvals.*', 'review.stage_decided']);
      expect((await ceo.caller.webhooks.get({ webhook_id: id })).event_types).toEqual(['approvals.*', 'review.stage_decided']);

      // Rotate: a new secret, shown once, signs from now on.
      await hook.getByRole('button', { name: 'Rotate secret…' }).click();
      await hook.getByRole('button', { name: 'Rotate the secret' }).click();
      const rotated = hook.getByRole('region', { name: `New signing secret for ${url}` });
      await expect.poll(() => rotated.count()).toBe(1);
      const secret2 = (await rotated.locator('code').textContent())?.trim() ?? '';
      expect(secret2).toMatch(/^whsec_/);
      expect(secret2).not.toBe(secret);
      await rotated.getByRole('button', { name: 'Done, hide the secret' }).click();
      expect(await page.content()).not.toContain(secret2);
      const before = at('/flow').length;
      await hook.getByRole('button', { name: 'Send a test' }).click();
      await expect.poll(() => at('/flow').length, { timeout: 15_000 }).toBe(before + 1);
      const last = at('/flow')[before];
      expect(verify(secret2, last ?? { path: '', headers: {}, body: '' })).toMatchObject({ type: 'webhook.test' });
      expect(() => verify(secret, last ?? { path: '', headers: {}, body: '' })).toThrow();

      // Disable, then enable again.
      await hook.getByRole('button', { name: 'Disable' }).click();
      await expect.poll(() => hook.locator('.badges').textContent()).toBe('Disabled');
      expect((await ceo.caller.webhooks.get({ webhook_id: id })).enabled).toBe(false);
      await hook.getByRole('button', { name: 'Enable' }).click();
      await expect.poll(() => hook.locator('.badges').textContent()).toBe('Enabled');
      expect((await ceo.caller.webhooks.get({ webhook_id: id })).enabled).toBe(true);

      // Delete, after a change of mind.
      await hook.getByRole('button', { name: 'Delete…' }).click();
      await hook.getByRole('button', { name: 'Keep it' }).click();
      expect((await ceo.caller.webhooks.list({})).items.some((w) => w.id === id)).toBe(true);
      await hook.getByRole('button', { name: 'Delete…' }).click();
      await hook.getByRole('button', { name: 'Delete the webhook' }).click();
      await expect.poll(() => card(page, url).count()).toBe(0);
      expect(await page.getByRole('status').textContent()).toBe(`Webhook for ${url} deleted, with its deliveries.`);
      expect((await ceo.caller.webhooks.list({})).items.some((w) => w.id === id)).toBe(false);
      expect(errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'a webhook disabled from the page no longer receives events',
    async () => {
      const url = `${receiver.url}/quiet`;
      await ceo.caller.webhooks.create({ url, event_types: ['approval.created'] });
      const { page, errors } = await open(ceo, '/webhooks');
      const hook = card(page, url);
      await hook.getByRole('button', { name: 'Disable' }).click();
      await expect.poll(() => hook.locator('.badges').textContent()).toBe('Disabled');
      await expect.poll(() => page.getByRole('status').textContent()).toBe(`Webhook for ${url} disabled: no new events are sent.`);
      await manager.caller.approvals.create({ action_type: 'deploy:staging', title: 'Quiet', description: 'Not sent', risk_level: 'low' });
      // A delivery would be queued in the event's own transaction: there is none to wait for.
      expect((await ceo.caller.webhooks.deliveries({ webhook_id: (await ceo.caller.webhooks.list({})).items.find((w) => w.url === url)?.id ?? '' })).items).toEqual([]);
      expect(at('/quiet')).toEqual([]);
      expect(errors).toEqual([]);
    },
    SLOW,
  );
});

describe('who may manage webhooks', () => {
  it('a manager has no Webhooks link, and the page says they are the CEO\'s without asking the API', async () => {
    const { page, errors } = await open(manager, '/approvals');
    await expect.poll(() => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Approvals' }).count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    const asked: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/')) asked.push(new URL(r.url()).pathname);
    });
    await page.goto(`${svc.origin}/webhooks`);
    await expect.poll(() => page.getByText('Webhooks are managed by the CEO.').count()).toBe(1);
    expect(asked.filter((p) => p.includes('webhooks'))).toEqual([]);
    expect(errors).toEqual([]);
  }, SLOW);
});

describe('accessibility and small screens', () => {
  it(
    'the webhooks page (create form with its errors, then webhooks with deliveries) fits 375 px without scrolling sideways, and axe finds no serious violation',
    async () => {
      const shown = `${receiver.url}/hooks/agent-org`;
      const made = await ceo.caller.webhooks.create({ url: shown, event_types: ['approvals.*', 'user.deleted'], description: 'Posts decisions to the release channel' });
      await ceo.caller.webhooks.test({ webhook_id: made.id });
      receiver.statuses.push(503);
      const paused = await ceo.caller.webhooks.create({ url: `${receiver.url}/paused`, event_types: ['reviews.*'] });
      await ceo.caller.webhooks.update({ webhook_id: paused.id, enabled: false });
      await manager.caller.approvals.create({ action_type: 'deploy:production', title: 'Release 10', description: 'Shown', risk_level: 'medium' });
      for (const width of [375, 1100]) {
        const { page, errors } = await open(ceo, '/webhooks', width);
        await expect.poll(() => deliveries(page, shown).count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
        await page.getByRole('button', { name: 'Create a webhook…' }).click();
        const form = createForm(page);
        await form.getByLabel('URL').fill('ftp://example.com/hook');
        await form.getByRole('button', { name: 'Create webhook' }).click();
        await expect.poll(() => form.getByText('Choose at least one event type.').count()).toBe(1);
        expect(await form.locator('.field-error').first().textContent()).toBe('Must be an http or https URL.');
        expect(await horizontalOverflow(page), `form, width ${String(width)}`).toBe(0);
        let violations = await seriousViolations(page);
        expect(violations, describeViolations(violations)).toEqual([]);
        // Keyboard only: an event type is ticked with Space.
        await form.getByLabel('approvals.*').focus();
        await page.keyboard.press('Space');
        expect(await form.getByLabel('approvals.*').isChecked()).toBe(true);
        await form.getByRole('button', { name: 'Cancel' }).click();
        await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
        expect(await horizontalOverflow(page), `list, width ${String(width)}`).toBe(0);
        violations = await seriousViolations(page);
        expect(violations, describeViolations(violations)).toEqual([]);
        await snap(page, width === 375 ? 'dashboard-webhooks-375' : 'dashboard-webhooks');
        expect(errors).toEqual([]);
      }
    },
    SLOW,
  );
});
