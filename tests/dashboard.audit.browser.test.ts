// The audit page in Chromium (CONTRACT §4.13, §4.9): a CEO sees the entries of actions done in this test, newest
// first with their actor, marker and target; filters by type prefix, actor and time, kept in the URL; loads more;
// exports the same view as NDJSON; a manager neither sees nor reads it; 375 px, axe.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeDashboard,
  describeViolations,
  horizontalOverflow,
  seriousViolations,
  signedInContext,
  snap,
  startDashboard,
  watchProblems,
  type ServedService,
} from './helpers/browser.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const SLOW = 120_000;

let svc: ServedService;
let browser: Browser;
let ceo: TestUser;
let manager: TestUser;
let board: TestUser;
let pair: TestUser;
let max: TestUser;
beforeAll(async () => {
  ({ svc, browser, ceo } = await startDashboard({ ceoUsername: 'ceo' }));
  manager = await createUser(svc, { role: 'manager', username: 'mia' });
  board = await createUser(svc, { role: 'board_member', username: 'bea' });
  // Each test acts through users of its own: the tests run in a shuffled order.
  pair = await createUser(svc, { role: 'pair_programmer', username: 'pat' });
  max = await createUser(svc, { role: 'manager', username: 'max' });
}, SLOW);
afterAll(() => closeDashboard({ svc, browser }), SLOW);

type Opened = { page: Page; context: BrowserContext; errors: string[] };

async function open(user: TestUser, path: string, width?: number): Promise<Opened> {
  const context = await signedInContext(browser, svc.origin, user, width === undefined ? {} : { width });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const { errors } = watchProblems(page);
  await page.goto(`${svc.origin}${path}`);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).not.toBeNull();
  return { page, context, errors };
}

const entries = (page: Page) => page.getByRole('list', { name: 'Audit entries' }).getByRole('article');
const entryTypes = (page: Page) => page.getByRole('list', { name: 'Audit entries' }).locator('.audit-type').allTextContents();
const filters = (page: Page) => page.getByRole('search', { name: 'Filter the audit log' });

async function failedLogin(username: string): Promise<void> {
  const res = await fetch(`${svc.origin}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ username, password: 'not-the-password-at-all' }),
  });
  expect(res.status).toBe(401);
}

/** An approval requested by a program with `user`'s API key: its entry's actor_type is `api_key`. */
async function requestWithKey(user: TestUser, title: string): Promise<string> {
  const key = await user.caller.apiKeys.create({ name: 'audit test job', scopes: ['approvals:write'] });
  const res = await fetch(`${svc.origin}/api/v1/approvals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${key.secret}` },
    body: JSON.stringify({ action_type: 'deploy:staging', title, description: 'From CI', risk_level: 'low' }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { data: { id: string } };
  return body.data.id;
}

describe('the CEO reads the audit log', () => {
  it(
    "sees this test's actions newest first with actor, API key marker and a link to what each is about; filters by type prefix and actor in the URL; exports the same view",
    async () => {
      const created = await ceo.caller.users.create({ username: 'nora', role: 'observer', password: 'a-long-initial-password-1' });
      const approval = await manager.caller.approvals.create({ action_type: 'deploy:production', title: 'Ship it', description: 'Release 7', risk_level: 'high' });
      const fromKey = await requestWithKey(manager, 'Nightly build');
      await failedLogin('mallory');

      const { page, errors } = await open(ceo, '/audit');
      expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).getAttribute('aria-current')).toBe('page');
      await expect.poll(async () => (await entryTypes(page)).slice(0, 4)).toEqual(['auth.login_failed', 'approval.created', 'api_key.created', 'approval.created']);
      const types = await entryTypes(page);
      expect(types).toContain('user.created');

      const failed = entries(page).first();
      expect(await failed.locator('.audit-actor').textContent()).toBe('—');
      expect(await failed.locator('.audit-data summary').textContent()).toContain('"username":"mallory"');
      // The data unfolds in full.
      await failed.locator('.audit-data summary').click();
      expect(await failed.locator('.audit-data pre').textContent()).toContain('"reason": "unknown_user"');
      expect(await failed.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(await failed.locator('dt:text-is("IP") + dd').textContent()).toMatch(/127\.0\.0\.1/);
      expect(await failed.locator('dt:text-is("Request id") + dd').textContent()).not.toBe('—');

      const byKey = entries(page).nth(1);
      expect(await byKey.locator('.audit-actor').textContent()).toBe('mia API key');
      expect(await byKey.locator('.audit-target a').getAttribute('href')).toBe(`/approvals?status=all#approval-${fromKey}`);
      const bySession = page.getByRole('list', { name: 'Audit entries' }).getByRole('article').filter({ has: page.locator(`a[href$="approval-${approval.id}"]`) });
      expect(await bySession.locator('.audit-actor').textContent()).toBe('mia');
      const userEntry = page.getByRole('list', { name: 'Audit entries' }).getByRole('article').filter({ has: page.locator(`a[href="/users#user-${created.id}"]`) });
      expect(await userEntry.locator('.audit-type').textContent()).toBe('user.created');
      expect(await userEntry.locator('.audit-actor').textContent()).toBe('ceo');

      // A type prefix from the suggestions, then an actor typed in: both in the URL, and Back returns.
      await filters(page).getByRole('button', { name: 'approval.' }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get('type')).toBe('approval.');
      // Only approval types (other tests' requests may be among them: the tests run in a shuffled order).
      await expect.poll(async () => (await entryTypes(page)).slice(0, 2)).toEqual(['approval.created', 'approval.created']);
      expect((await entryTypes(page)).every((t) => t.startsWith('approval.'))).toBe(true);
      expect(await entries(page).filter({ hasText: 'auth.login_failed' }).count()).toBe(0);
      await filters(page).getByLabel('Actor').fill('bea');
      await filters(page).getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => page.getByText('No entries match these filters.').count()).toBe(1);
      await filters(page).getByLabel('Actor').fill('mia');
      await filters(page).getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => new URL(page.url()).search).toBe('?type=approval.&actor=mia');
      await expect.poll(() => entries(page).count()).toBe(2);
      const href = await page.getByRole('link', { name: 'Export NDJSON' }).getAttribute('href');
      expect(href).toBe('/api/v1/audit/export?type=approval.&actor=mia');
      // The export is a REST download with the browser's cookie session: the same entries, oldest first.
      const exported = await page.evaluate<{ status: number; type: string | null; body: string }, string>(async (url) => {
        const res = await fetch(url);
        return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
      }, href ?? '');
      expect(exported.status).toBe(200);
      expect(exported.type).toContain('application/x-ndjson');
      const lines = exported.body.trim().split('\n').map((l) => JSON.parse(l) as { type: string; target_id: string; actor: string });
      expect(lines.map((l) => l.target_id)).toEqual([approval.id, fromKey]);

      await page.goBack();
      await expect.poll(() => new URL(page.url()).search).toBe('?type=approval.&actor=bea');
      expect(await filters(page).getByLabel('Actor').inputValue()).toBe('bea');

      // An exact type and a target id, and a time window: `since` in the future leaves nothing.
      await page.goto(`${svc.origin}/audit?type=user.created&target_id=${created.id}`);
      await expect.poll(() => entryTypes(page)).toEqual(['user.created']);
      const tomorrow = new Date(Date.now() + 24 * 3600 * 1000);
      const local = `${String(tomorrow.getFullYear())}-${String(tomorrow.getMonth() + 1).padStart(2, '0')}-${String(tomorrow.getDate()).padStart(2, '0')}T09:30`;
      await filters(page).getByLabel('Since').fill(local);
      await filters(page).getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get('since')).toBe(new Date(local).toISOString());
      await expect.poll(() => page.getByText('No entries match these filters.').count()).toBe(1);
      expect(await filters(page).getByLabel('Since').inputValue()).toBe(local);

      // A filter the API refuses is named beside its field before any request.
      await filters(page).getByLabel('Type', { exact: true }).fill('x'.repeat(65));
      await filters(page).getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => filters(page).locator('.field-error').textContent()).toBe('At most 64 characters.');
      expect(errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'pages with "Load more", 50 entries at a time, without repeating one',
    async () => {
      for (let i = 0; i < 55; i++) await pair.caller.approvals.create({ action_type: 'deploy:canary', title: `Canary ${String(i)}`, description: 'Paging', risk_level: 'low' });
      const { page, errors } = await open(board, '/audit?type=approval.created&actor=pat');
      await expect.poll(() => entries(page).count()).toBe(50);
      await page.getByRole('button', { name: 'Load more' }).click();
      await expect.poll(() => entries(page).count()).toBeGreaterThan(50);
      const titles = await Promise.all((await page.locator('.audit-target a').all()).map((l) => l.getAttribute('href')));
      expect(new Set(titles).size).toBe(titles.length);
      expect(errors).toEqual([]);
    },
    SLOW,
  );
});

describe('who may read it', () => {
  it('a manager has no Audit link, and the page says the log is not theirs without asking the API', async () => {
    const { page, errors } = await open(manager, '/approvals');
    await expect.poll(() => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Approvals' }).count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).count()).toBe(0);
    const asked: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/')) asked.push(new URL(r.url()).pathname);
    });
    await page.goto(`${svc.origin}/audit`);
    await expect.poll(() => page.getByText('The audit log is open to the CEO and board members only.').count()).toBe(1);
    expect(await entries(page).count()).toBe(0);
    expect(asked.filter((p) => p.includes('audit'))).toEqual([]);
    expect(errors).toEqual([]);
  }, SLOW);

  it('a board member has the Audit link, and no Webhooks link', async () => {
    const { page, errors } = await open(board, '/approvals');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect.poll(() => nav.getByRole('link', { name: 'Audit' }).count()).toBe(1);
    expect(await nav.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    expect(errors).toEqual([]);
  }, SLOW);
});

describe('accessibility and small screens', () => {
  it(
    'the audit page with an entry unfolded fits 375 px without scrolling sideways, works from the keyboard, and axe finds no serious violation',
    async () => {
      // A varied view: a role change, a decision, a key, a failed sign-in (and only these, since `since`).
      const since = new Date(Date.now() - 1000).toISOString();
      const otto = await ceo.caller.users.create({ username: 'otto', role: 'observer', password: 'a-long-initial-password-2' });
      await ceo.caller.users.updateRole({ user_id: otto.id, role: 'manager' });
      const release = await max.caller.approvals.create({ action_type: 'deploy:production', title: 'Release 8', description: 'Quarterly', risk_level: 'critical' });
      await ceo.caller.approvals.reject({ approval_id: release.id, reason: 'Not during the freeze' });
      await requestWithKey(max, 'Nightly build 2');
      await failedLogin('ceo');
      for (const width of [375, 1100]) {
        const { page, errors } = await open(ceo, '/audit', width);
        await expect.poll(() => entries(page).count()).toBeGreaterThan(5);
        // Keyboard only: a suggestion is reached with Tab and pressed with Enter.
        await filters(page).getByRole('button', { name: 'Clear' }).focus();
        await page.keyboard.press('Tab');
        expect(await page.evaluate<string | null>('document.activeElement?.textContent ?? null')).toBe('auth.');
        await page.keyboard.press('Enter');
        await expect.poll(() => new URL(page.url()).searchParams.get('type')).toBe('auth.');
        await page.goto(`${svc.origin}/audit?${new URLSearchParams({ since }).toString()}`);
        await expect.poll(() => entries(page).count()).toBeGreaterThan(5);
        await entries(page).first().locator('.audit-data summary').click();
        expect(await horizontalOverflow(page), `width ${String(width)}`).toBe(0);
        const violations = await seriousViolations(page);
        expect(violations, describeViolations(violations)).toEqual([]);
        await snap(page, width === 375 ? 'dashboard-audit-375' : 'dashboard-audit');
        expect(errors).toEqual([]);
      }
    },
    SLOW,
  );
});
