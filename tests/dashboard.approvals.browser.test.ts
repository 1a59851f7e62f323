// The approvals queue and a task's review stages in Chromium: filters, urgency, decisions, own requests, new requests, 375 px, axe.
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeViolations,
  horizontalOverflow,
  closeDashboard, seriousViolations,
  signedInContext,
  snap,
  startDashboard, watchProblems,
  type ServedService,
} from './helpers/browser.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const SLOW = 60_000;

let svc: ServedService;
let browser: Browser;
let ceo: TestUser;
let manager: TestUser;
let board: TestUser;
let observer: TestUser;
let pair: TestUser;
beforeAll(async () => {
  ({ svc, browser, ceo } = await startDashboard({ ceoUsername: 'ceo' }));
  manager = await createUser(svc, { role: 'manager', username: 'mia' });
  board = await createUser(svc, { role: 'board_member', username: 'bob' });
  observer = await createUser(svc, { role: 'observer', username: 'olga' });
  pair = await createUser(svc, { role: 'pair_programmer', username: 'pat' });
}, SLOW);
afterAll(() => closeDashboard({ svc, browser }), SLOW);

/** An action type no other test uses, so a test can filter the shared queue down to its own requests. */
const tagged = (action: string) => `t${randomBytes(3).toString('hex')}:${action}`;

type Request = { title: string; action_type: string; risk_level?: 'low' | 'medium' | 'high' | 'critical'; ttl_seconds?: number; task_id?: string };
const request = (by: TestUser, r: Request) => by.caller.approvals.create({ description: `Why: ${r.title}`, risk_level: 'medium', ...r });

async function open(user: TestUser, path: string, width?: number, opts: { liveStalled?: boolean } = {}): Promise<{ page: Page; errors: string[] }> {
  const page = await (await signedInContext(browser, svc.origin, user, width === undefined ? {} : { width })).newPage();
  page.setDefaultTimeout(15_000);
  const { errors } = watchProblems(page);
  // The stream of live updates is left unanswered: the page knows only what it read (a stalled connection).
  if (opts.liveStalled) await page.route('**/api/trpc/events.subscribe?**', () => undefined);
  await page.goto(`${svc.origin}${path}`);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).not.toBeNull();
  return { page, errors };
}

const card = (page: Page, title: string) => page.getByRole('article', { name: title });
const titles = (page: Page) => page.getByRole('list', { name: 'Approval requests' }).getByRole('heading', { level: 2 }).allTextContents();

describe('the approvals queue', () => {
  it(
    'opens on pending requests and filters by status, risk and action type, kept in the URL',
    async () => {
      const deploy = tagged('deploy');
      const merge = tagged('merge');
      await request(manager, { title: 'Deploy critical', action_type: deploy, risk_level: 'critical' });
      await request(manager, { title: 'Deploy low', action_type: deploy, risk_level: 'low' });
      const merged = await request(manager, { title: 'Merge high', action_type: merge, risk_level: 'high' });
      await ceo.caller.approvals.approve({ approval_id: merged.id, comment: 'fine' });

      const { page, errors } = await open(board, `/approvals?action=${encodeURIComponent(deploy)}`);
      await expect.poll(() => titles(page)).toEqual(['Deploy low', 'Deploy critical']);
      await page.getByLabel('Risk').selectOption('critical');
      await expect.poll(() => page.url()).toContain('risk=critical');
      await expect.poll(() => titles(page)).toEqual(['Deploy critical']);

      await page.getByLabel('Action type').fill(merge);
      await page.getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => titles(page)).toEqual([]);
      await expect.poll(() => page.getByText('No approvals match these filters.').count()).toBe(1);
      await page.getByLabel('Risk').selectOption('any');
      await page.getByLabel('Status').selectOption('approved');
      await expect.poll(() => titles(page)).toEqual(['Merge high']);
      expect(await card(page, 'Merge high').textContent()).toContain('Approved by ceo');
      expect(new URL(page.url()).search).toBe(`?status=approved&action=${encodeURIComponent(merge)}`);
      await page.goBack();
      await expect.poll(() => page.getByLabel('Status').inputValue()).toBe('pending');
      expect(errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'shows how urgent each pending request is and how long is left',
    async () => {
      const action = tagged('urgency');
      await request(manager, { title: 'Soon', action_type: action, ttl_seconds: 600 });
      await request(manager, { title: 'Today', action_type: action, ttl_seconds: 7200 });
      await request(manager, { title: 'Later', action_type: action, ttl_seconds: 86_400 });
      await request(manager, { title: 'Whenever', action_type: action });
      const { page } = await open(board, `/approvals?action=${encodeURIComponent(action)}`);
      await expect.poll(() => titles(page)).toHaveLength(4);
      const badge = (title: string) => card(page, title).locator('.badge[class*="badge-urgency-"]').textContent();
      expect(await badge('Soon')).toMatch(/^Critical · (9|10) min left$/);
      expect(await badge('Today')).toMatch(/^High · (1 h 59 min|2 h) left$/);
      expect(await badge('Later')).toMatch(/^Normal · (23 h 59 min|24 h) left$/);
      expect(await badge('Whenever')).toBe('No expiry');
    },
    SLOW,
  );

  it(
    'an approver approves with a comment',
    async () => {
      const action = tagged('approve');
      const created = await request(manager, { title: 'Rotate keys', action_type: action, risk_level: 'high' });
      const { page, errors } = await open(ceo, `/approvals?action=${encodeURIComponent(action)}`);
      await card(page, 'Rotate keys').getByRole('button', { name: 'Approve…' }).click();
      await card(page, 'Rotate keys').getByLabel('Comment (optional)').fill('Go ahead after the backup.');
      await card(page, 'Rotate keys').getByRole('button', { name: 'Approve', exact: true }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toBe('Approved “Rotate keys”.');
      await expect.poll(() => titles(page)).toEqual([]);
      expect(await ceo.caller.approvals.get({ approval_id: created.id })).toMatchObject({ status: 'approved', decided_by: 'ceo', decision_reason: 'Go ahead after the backup.' });
      expect(errors).toEqual([]);
    },
    SLOW,
  );

  it(
    "rejecting needs a reason, and a decision that lost the race shows the server's detail",
    async () => {
      const action = tagged('reject');
      const created = await request(manager, { title: 'Drop table', action_type: action, risk_level: 'critical' });
      // Live updates would take the decided request away before the click; here they are held up, so the click loses the race.
      const { page, errors } = await open(board, `/approvals?action=${encodeURIComponent(action)}`, undefined, { liveStalled: true });
      const target = card(page, 'Drop table');
      await target.getByRole('button', { name: 'Reject…' }).click();
      await target.getByRole('button', { name: 'Reject', exact: true }).click();
      await expect.poll(() => target.getByText('Required.').count()).toBe(1);

      // Someone else decides first; the server's answer is shown as it is.
      await ceo.caller.approvals.approve({ approval_id: created.id, comment: null });
      const detail = await ceo.caller.approvals.approve({ approval_id: created.id }).then(
        () => '',
        (e: Error) => e.message,
      );
      await target.getByLabel('Reason for rejecting').fill('Not without a backup.');
      await target.getByRole('button', { name: 'Reject', exact: true }).click();
      // The queue is read again behind the error: the decided request leaves the pending view, the error stays.
      await expect.poll(() => titles(page)).toEqual([]);
      expect(await page.getByRole('alert').allTextContents()).toEqual([detail]);
      expect(await ceo.caller.approvals.get({ approval_id: created.id })).toMatchObject({ status: 'approved' });
      expect(errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'nobody is offered a decision on their own request; observers get neither decisions nor the request form',
    async () => {
      const action = tagged('own');
      await request(manager, { title: 'My own request', action_type: action });
      const own = await open(manager, `/approvals?action=${encodeURIComponent(action)}`);
      const mine = card(own.page, 'My own request');
      await expect.poll(() => mine.textContent()).toContain('You requested this; another approver decides.');
      expect(await mine.getByRole('button').count()).toBe(0);

      const watcher = await open(observer, `/approvals?action=${encodeURIComponent(action)}`);
      await expect.poll(() => titles(watcher.page)).toEqual(['My own request']);
      expect(await card(watcher.page, 'My own request').getByRole('button').count()).toBe(0);
      expect(await watcher.page.getByRole('button', { name: 'New approval request…' }).count()).toBe(0);
    },
    SLOW,
  );

  it(
    'a new request is checked as the API checks it and created once, even on a double click',
    async () => {
      const action = tagged('release');
      const { page, errors } = await open(pair, '/approvals');
      await page.getByRole('button', { name: 'New approval request…' }).click();
      const form = page.getByRole('form', { name: 'New approval request' });
      await form.getByLabel('Action type').fill('release');
      await form.getByLabel('Title').fill('Release 2.0');
      await form.getByLabel('Description').fill('Everything in the changelog.');
      await form.getByLabel('Time to decide (minutes)').fill('0');
      await form.getByRole('button', { name: 'Create request' }).click();
      await expect.poll(() => form.getByText('Must be <category>:<action> with exactly one colon and text on both sides.').count()).toBe(1);
      await expect.poll(() => form.getByText('Between 1 and 10080 minutes (7 days); empty for no expiry.').count()).toBe(1);

      await form.getByLabel('Action type').fill(action);
      await form.getByLabel('Time to decide (minutes)').fill('90');
      await form.getByRole('button', { name: 'Create request' }).dblclick();
      await expect.poll(() => page.getByRole('status').textContent()).toBe('Request “Release 2.0” created.');
      const created = (await ceo.caller.approvals.list({ action_type: action })).items;
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({ requested_by: 'pat', title: 'Release 2.0', urgency_level: 'high' });
      expect(errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'fits a 375 px wide screen without scrolling sideways, and axe finds no serious violation',
    async () => {
      const action = tagged('mobile-friendly-with-a-long-unbroken-action-name');
      await request(manager, { title: 'A request with a rather long title that has to wrap on a phone', action_type: action, ttl_seconds: 3000, task_id: 'task-1234567890-abcdefghij' });
      await request(manager, { title: 'Deploy the billing service', action_type: action, risk_level: 'critical', ttl_seconds: 1800 });
      await request(pair, { title: 'Rotate the database credentials', action_type: action, risk_level: 'high', ttl_seconds: 10_000 });
      for (const width of [375, 1100]) {
        const { page, errors } = await open(board, `/approvals?action=${encodeURIComponent(action)}`, width);
        await expect.poll(() => titles(page)).toHaveLength(3);
        await card(page, 'Deploy the billing service').getByRole('button', { name: 'Reject…' }).click();
        await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
        expect(await horizontalOverflow(page), `width ${String(width)}`).toBe(0);
        const violations = await seriousViolations(page);
        expect(violations, describeViolations(violations)).toEqual([]);
        await snap(page, width === 375 ? 'dashboard-approvals-375' : 'dashboard-approvals');
        expect(errors).toEqual([]);
      }
    },
    SLOW,
  );
});

describe("a task's review stages", () => {
  it(
    'lists the decisions so far, records a new one, and shows the 409 when a stage is decided twice',
    async () => {
      const task = `task-${randomBytes(3).toString('hex')}`;
      await pair.caller.reviews.decideStage({ task_id: task, stage_name: 'code_review', verdict: 'pass', reason: null });
      const { page, errors } = await open(manager, '/reviews');
      await page.getByLabel('Task id').fill(task);
      await page.getByRole('button', { name: 'Open task' }).click();
      await page.waitForURL(`**/reviews/${task}`);
      const stages = page.getByRole('list', { name: 'Decided stages' }).getByRole('listitem');
      await expect.poll(() => stages.count()).toBe(1);
      expect(await stages.first().textContent()).toContain('by pat');

      const form = page.getByRole('form', { name: 'Decide a stage' });
      await form.getByLabel('Stage').fill('security');
      await form.getByLabel('Fail').check();
      await form.getByLabel('Reason (optional)').fill('Secrets in the repository.');
      await form.getByRole('button', { name: 'Record decision' }).dblclick();
      await expect.poll(() => page.getByRole('status').textContent()).toBe('Stage security: fail.');
      await expect.poll(() => stages.count()).toBe(2);

      await form.getByLabel('Stage').fill('security');
      await form.getByRole('button', { name: 'Record decision' }).click();
      await expect.poll(() => form.getByRole('alert').textContent()).toBe('this stage has already been decided');
      expect(await pair.caller.reviews.listStages({ task_id: task })).toHaveLength(2);
      expect(errors).toEqual([]);

      const watcher = await open(observer, `/reviews/${task}`);
      await expect.poll(() => watcher.page.getByRole('list', { name: 'Decided stages' }).getByRole('listitem').count()).toBe(2);
      expect(await watcher.page.getByRole('form', { name: 'Decide a stage' }).count()).toBe(0);
    },
    SLOW,
  );
});
