// The setup wizard in Chromium, end to end: name locales, a company from a template, every agent edit, a hand-made agent, completion.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDashboard, describeViolations, seriousViolations, signedInContext, snap, startDashboard, watchProblems, type ServedService } from './helpers/browser.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const SLOW = 120_000;

let svc: ServedService;
let browser: Browser;
let ceo: TestUser;
beforeAll(async () => {
  // Both tests need the CEO (before one exists every page is first-run setup), whichever runs first.
  ({ svc, browser, ceo } = await startDashboard());
}, SLOW);
afterAll(() => closeDashboard({ svc, browser }), SLOW);

describe('the setup wizard', () => {
  it(
    'runs end to end: locales, a template company, rename, random name, model, personality, a new agent, completion',
    async () => {
      const page = await (await signedInContext(browser, svc.origin, ceo)).newPage();
      page.setDefaultTimeout(15_000);
      const problems = watchProblems(page);
      const agents = async () => (await ceo.caller.setup.listAgents({ limit: 200 })).items;
      const status = page.getByRole('status');
      const a11y = async (where: string) => {
        const violations = await seriousViolations(page);
        expect(violations, `${where}:\n${describeViolations(violations)}`).toEqual([]);
      };

      // The CEO's home while setup is open is the wizard.
      await page.goto(svc.origin);
      await page.waitForURL('**/setup');

      // 1. Name locales
      await page.getByLabel('Every locale').uncheck();
      await page.getByLabel('German (Germany)').check();
      await page.getByLabel('French (France)').check();
      await a11y('locales');
      await page.getByRole('button', { name: 'Save and continue' }).click();
      await page.waitForURL('**/setup?step=company');
      expect(await ceo.caller.setup.getLocales()).toEqual({ locales: ['de_DE', 'fr_FR'] });

      // 2. Company from a template; the name is checked as the API checks it.
      await page.getByRole('button', { name: 'Save and continue' }).click();
      await expect.poll(() => page.getByText('Required.').count()).toBe(1);
      await page.getByLabel('Company name').fill('Acme Robotics');
      await page.getByRole('radio', { name: /^Startup/ }).check();
      await a11y('company');
      await page.getByRole('button', { name: 'Save and continue' }).click();
      await page.waitForURL('**/setup?step=roster');
      const cards = page.getByRole('list', { name: 'Agents' }).getByRole('listitem');
      await expect.poll(() => cards.count()).toBe(6);
      const roster = await agents();
      await a11y('roster');
      await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
      await snap(page, 'dashboard-wizard');

      // 3a. Rename
      const first = cards.nth(0);
      await first.getByLabel('Name of agent 1').fill('Ada Lovelace');
      await first.getByRole('button', { name: 'Rename' }).click();
      await expect.poll(() => status.textContent()).toBe('Agent 1 is now Ada Lovelace.');
      expect((await agents())[0]?.name).toBe('Ada Lovelace');

      // 3b. Random name (from the chosen locales)
      await cards.nth(1).getByRole('button', { name: 'Random name' }).click();
      await expect.poll(() => status.textContent()).toMatch(/^Agent 2 is now /);
      expect((await agents())[1]?.name).not.toBe(roster[1]?.name);

      // 3c. Model: another of the roster's models
      const current = `${roster[0]!.model_provider}/${roster[0]!.model_id}`;
      const other = roster.map((a) => `${a.model_provider}/${a.model_id}`).find((m) => m !== current)!;
      await first.getByLabel('Model of Ada Lovelace').selectOption(other);
      await first.getByRole('button', { name: 'Change model' }).click();
      await expect.poll(async () => (await agents())[0]?.model_id).toBe(other.split('/')[1]);

      // 3d. Personality, with the preset's description shown
      await first.getByLabel('Personality of Ada Lovelace').selectOption('security_sentinel');
      await first.getByRole('button', { name: 'Change personality' }).click();
      await expect.poll(async () => (await agents())[0]?.personality_preset).toBe('security_sentinel');

      // 3e. A hand-made agent; a double click adds it once.
      await page.getByRole('button', { name: 'Add an agent…' }).click();
      const form = page.getByRole('form', { name: 'Add an agent' });
      await form.getByLabel('Name', { exact: true }).fill('Grace Hopper');
      await form.getByLabel('Role').fill('Compiler Engineer');
      await form.getByLabel('Monthly budget (optional)').fill('2000000');
      await form.getByRole('button', { name: 'Add agent' }).click();
      await expect.poll(() => form.getByText('At most 1000000.').count()).toBe(1);
      await form.getByLabel('Monthly budget (optional)').fill('1500');
      await form.getByRole('button', { name: 'Add agent' }).dblclick();
      await expect.poll(() => status.textContent()).toBe('Agent Grace Hopper added.');
      await expect.poll(() => cards.count()).toBe(7);
      expect((await agents()).filter((a) => a.name === 'Grace Hopper')).toHaveLength(1);

      // 4. Completion
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL('**/setup?step=finish');
      await expect.poll(() => page.getByRole('list', { name: 'Setup checklist' }).textContent()).toContain('A company is created');
      await a11y('finish');
      await page.getByRole('button', { name: 'Complete setup' }).click();
      await page.waitForURL('**/approvals');
      expect(await ceo.caller.setup.status()).toMatchObject({ needs_setup: false });
      await page.goto(`${svc.origin}/setup`);
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Setup is complete');
      expect(problems.errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'is the CEO\'s alone: another user is told so',
    async () => {
      const manager = await createUser(svc, { role: 'manager' });
      const page = await (await signedInContext(browser, svc.origin, manager)).newPage();
      await page.goto(`${svc.origin}/setup`);
      await expect.poll(() => page.getByText('Only the CEO runs the setup wizard.').count()).toBe(1);
      await expect.poll(() => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Setup' }).count()).toBe(0);
    },
    SLOW,
  );
});
