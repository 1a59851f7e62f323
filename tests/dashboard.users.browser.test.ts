// Users, org roles and the status page in Chromium: the CEO's actions, shown to the CEO only.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDashboard, signedInContext, startDashboard, watchProblems, type ServedService } from './helpers/browser.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const SLOW = 60_000;

let svc: ServedService;
let browser: Browser;
let ceo: TestUser;
beforeAll(async () => {
  ({ svc, browser, ceo } = await startDashboard({ ceoUsername: 'ceo' }));
}, SLOW);
afterAll(() => closeDashboard({ svc, browser }), SLOW);

async function open(user: TestUser, path: string): Promise<{ page: Page; errors: string[] }> {
  const page = await (await signedInContext(browser, svc.origin, user)).newPage();
  page.setDefaultTimeout(15_000);
  const { errors } = watchProblems(page);
  await page.goto(`${svc.origin}${path}`);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).not.toBeNull();
  return { page, errors };
}

const userCard = (page: Page, username: string) => page.getByRole('article', { name: username, exact: true });
const userOf = async (username: string) => (await ceo.caller.users.list({ limit: 200 })).items.find((u) => u.username === username);

describe('users and org roles', () => {
  it(
    'the CEO adds a user once, even on a double click, after the form checked the password length',
    async () => {
      const { page, errors } = await open(ceo, '/users');
      await page.getByRole('button', { name: 'Add a user…' }).click();
      const form = page.getByRole('form', { name: 'Add a user' });
      await form.getByLabel('Username').fill('nora');
      await form.getByLabel('Initial password').fill('too short');
      await form.getByLabel('Role').selectOption('manager');
      await form.getByRole('button', { name: 'Add user' }).click();
      await expect.poll(() => form.getByText('At least 12 characters.').count()).toBe(1);
      await form.getByLabel('Initial password').fill('a perfectly fine password');
      await form.getByRole('button', { name: 'Add user' }).dblclick();
      await expect.poll(() => page.getByRole('status').textContent()).toBe('User nora created. They choose their own password at first sign-in.');
      await expect.poll(() => userCard(page, 'nora').textContent()).toContain('Must change password');
      expect((await ceo.caller.users.list({ limit: 200 })).items.filter((u) => u.username === 'nora')).toHaveLength(1);

      // The server's own rule shows as sent: the name is taken now.
      await page.getByRole('button', { name: 'Add a user…' }).click();
      await form.getByLabel('Username').fill('NORA');
      await form.getByLabel('Initial password').fill('another fine password');
      await form.getByRole('button', { name: 'Add user' }).click();
      const detail = await ceo.caller.users.create({ username: 'Nora', password: 'another fine password', role: 'observer' }).then(
        () => '',
        (e: Error) => e.message,
      );
      await expect.poll(() => form.getByRole('alert').textContent()).toBe(detail);
      expect(errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'the CEO changes a role, grants a department admin with departments, revokes an org role and deletes a user',
    async () => {
      const victor = await createUser(svc, { role: 'observer', username: 'victor' });
      const { page, errors } = await open(ceo, '/users');
      const card = userCard(page, 'victor');
      await card.getByLabel('Role of victor').selectOption('board_member');
      await card.getByRole('button', { name: 'Change role' }).click();
      await expect.poll(async () => (await userOf('victor'))?.role).toBe('board_member');

      await card.getByRole('button', { name: 'Grant organization role…' }).click();
      await card.getByLabel('Organization role').selectOption('department_admin');
      await card.getByRole('button', { name: 'Grant', exact: true }).click();
      await expect.poll(() => card.getByText('A department admin needs at least one department.').count()).toBe(1);
      await card.getByLabel('Departments').fill('engineering, design');
      await card.getByRole('button', { name: 'Grant', exact: true }).click();
      await expect.poll(async () => (await userOf('victor'))?.scoped_departments).toEqual(['design', 'engineering']);
      await expect.poll(() => card.getByRole('list', { name: 'Organization roles of victor' }).textContent()).toContain('Department admin (design, engineering)');

      await card.getByRole('button', { name: 'Remove Department admin from victor' }).click();
      await expect.poll(async () => (await userOf('victor'))?.org_roles).toEqual([]);

      await card.getByRole('button', { name: 'Delete…' }).click();
      await card.getByRole('button', { name: 'Delete victor' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toBe('User victor deleted; their sessions have ended.');
      await expect.poll(() => userCard(page, 'victor').count()).toBe(0);
      await expect(victor.caller.auth.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      expect(errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'the CEO is offered no role change or deletion of themselves',
    async () => {
      const { page } = await open(ceo, '/users');
      const self = userCard(page, 'ceo');
      await expect.poll(() => self.count()).toBe(1);
      expect(await self.getByRole('button', { name: 'Delete…' }).count()).toBe(0);
      expect(await self.getByLabel('Role of ceo').count()).toBe(0);
    },
    SLOW,
  );

  it(
    'anyone else sees the list without any of the CEO actions',
    async () => {
      const manager = await createUser(svc, { role: 'manager' });
      await createUser(svc, { role: 'observer', username: 'quinn' });
      const { page, errors } = await open(manager, '/users');
      await expect.poll(() => userCard(page, 'quinn').count()).toBe(1);
      expect(await page.getByRole('button', { name: 'Add a user…' }).count()).toBe(0);
      for (const name of [/^Change role$/, /^Delete…$/, /^Grant organization role…$/, /^Remove /]) expect(await page.getByRole('button', { name }).count()).toBe(0);
      expect(errors).toEqual([]);
    },
    SLOW,
  );
});

describe('the status page', () => {
  it(
    'shows liveness, readiness and the capabilities of this deployment',
    async () => {
      const { page, errors } = await open(await createUser(svc), '/status');
      await expect.poll(() => page.getByRole('article', { name: 'Readiness' }).textContent()).toContain('Ready');
      await expect.poll(() => page.getByRole('article', { name: 'Liveness' }).textContent()).toContain('Up');
      const capabilities = page.getByRole('article', { name: 'Capabilities' });
      await expect.poll(() => capabilities.textContent()).toContain('Dashboard');
      const caps = await ceo.caller.probes.capabilities();
      for (const [name, on] of Object.entries(caps)) {
        const row = capabilities.locator('dl > div').filter({ hasText: new RegExp(`^${name.replace(/_/g, ' ')}`, 'i') });
        expect(await row.locator('dd').textContent(), name).toBe(on ? 'Yes' : 'No');
      }
      expect(errors).toEqual([]);
    },
    SLOW,
  );
});
