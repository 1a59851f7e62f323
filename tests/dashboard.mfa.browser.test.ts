// Two-factor authentication in Chromium (CONTRACT §3.6, §4.9): the security page enrolls with a QR code drawn in the
// page, confirms with a code computed here from the enrolled secret, shows the recovery codes once (copy, download);
// the login asks for the one-time code and takes a recovery code instead; new codes; turning it off; a role that
// requires two-factor is led to enroll; the CEO's reset on the users page; 375 px, axe.
import fs from 'node:fs/promises';
import { decodeBase32IgnorePadding } from '@oslojs/encoding';
import { generateHOTP } from '@oslojs/otp';
import { create as createQr } from 'qrcode';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeDashboard,
  describeViolations,
  horizontalOverflow,
  launchChromium,
  newContext,
  seriousViolations,
  signedInContext,
  snap,
  startServedService,
  watchProblems,
  type ServedService,
} from './helpers/browser.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const SLOW = 120_000;
const PERIOD_S = 30;

let svc: ServedService;
let browser: Browser;
let ceo: TestUser;
beforeAll(async () => {
  // Board members must use two-factor authentication here; rate limits off because the tests sign in often.
  [svc, browser] = await Promise.all([startServedService({ env: { RATE_LIMITS_ENABLED: 'false', MFA_REQUIRED_ROLES: 'board_member' } }), launchChromium()]);
  ceo = await createUser(svc, { role: 'ceo', username: 'ceo' });
}, SLOW);
afterAll(() => closeDashboard({ svc, browser }), SLOW);

/**
 * An authenticator app for one enrolled secret, computed as the server checks it (@oslojs/otp, RFC 6238). The
 * service accepts a code of the previous, current or next step, each step once and only after a later one was
 * not used: every call gives a code of the current or next step after the last one given, waiting for the clock
 * when needed.
 */
function authenticator(secret: string) {
  const key = decodeBase32IgnorePadding(secret.replace(/\s/g, ''));
  let last = -Infinity;
  const stepNow = () => Math.floor(Date.now() / 1000 / PERIOD_S);
  const codeOf = (step: number) => generateHOTP(key, BigInt(step), 6);
  return {
    async next(): Promise<string> {
      // Never the previous step: the code must still be accepted when a step boundary passes before the server
      // checks it (a slow page or a busy machine), so the current step at the earliest.
      let step = Math.max(last + 1, stepNow());
      while (step > stepNow() + 1) await new Promise((r) => setTimeout(r, 500));
      step = Math.max(step, stepNow());
      last = step;
      return codeOf(step);
    },
    /** Six digits that are the code of no step the server would accept now. */
    wrong(): string {
      const near = new Set([-2, -1, 0, 1, 2].map((d) => codeOf(stepNow() + d)));
      for (let n = 123456; ; n++) if (!near.has(String(n))) return String(n);
    },
  };
}

type Opened = { page: Page; context: BrowserContext; errors: string[]; foreign: string[] };

/** A page that records every request to another origin (none may carry the secret away). */
async function openPage(context: BrowserContext, path: string): Promise<Opened> {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.origin });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const { errors } = watchProblems(page);
  const foreign: string[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.origin !== svc.origin && url.protocol !== 'blob:' && url.protocol !== 'data:') foreign.push(r.url());
  });
  await page.goto(`${svc.origin}${path}`);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).not.toBeNull();
  return { page, context, errors, foreign };
}

async function open(user: TestUser, path: string, width?: number): Promise<Opened> {
  return openPage(await signedInContext(browser, svc.origin, user, width === undefined ? {} : { width }), path);
}

/** Whether the service has two-factor on for `user` (asked by the CEO: the user's own session may have ended). */
const mfaOn = async (user: TestUser) => (await ceo.caller.users.get({ user_id: user.id })).mfa_enabled;
const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();
const fact = (page: Page, name: string) => page.locator(`.mfa-facts dt:text-is("${name}") + dd`).textContent();
const codesPanel = (page: Page) => page.getByRole('region', { name: /recovery codes/ });

/** Starts enrollment on the security page; returns the secret shown for manual entry, checking the QR code carries the otpauth URL. */
async function startEnrollment(page: Page, username: string): Promise<string> {
  await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
  const qr = page.getByRole('img', { name: 'QR code to scan with your authenticator app' });
  await expect.poll(() => qr.count()).toBe(1);
  const secret = ((await page.locator('.totp-secret').textContent()) ?? '').replace(/\s/g, '');
  expect(secret).toMatch(/^[A-Z2-7]{32,}$/);
  // The QR code drawn in the page is the one of the contract's otpauth URL for this secret.
  const url = `otpauth://totp/agent-org:${encodeURIComponent(username)}?secret=${secret}&issuer=agent-org&algorithm=SHA1&digits=6&period=30`;
  const { size, data } = createQr(url, { errorCorrectionLevel: 'M' }).modules;
  let expected = '';
  for (let row = 0; row < size; row++) for (let col = 0; col < size; col++) if (data[row * size + col]) expected += `M${String(col)} ${String(row)}h1v1h-1z`;
  expect(await qr.locator('path').getAttribute('d')).toBe(expected);
  return secret;
}

/** Confirms with a code of `app`; returns the ten recovery codes the page then shows. */
async function confirmEnrollment(page: Page, app: ReturnType<typeof authenticator>): Promise<string[]> {
  const form = page.getByRole('form', { name: 'Confirm two-factor authentication' });
  await form.getByLabel('Code from the app').fill(await app.next());
  await form.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
  const list = codesPanel(page).getByRole('list', { name: 'Recovery codes' });
  await expect.poll(() => list.getByRole('listitem').count()).toBe(10);
  return (await list.getByRole('listitem').allTextContents()).map((c) => c.trim());
}

async function signIn(page: Page, user: { username: string; password: string }): Promise<void> {
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

describe('a user turns two-factor authentication on, signs in with it, and turns it off', () => {
  it(
    'enrolls with a locally drawn QR code, confirms, keeps the recovery codes (copy, download), signs in with a code and with a recovery code, gets new codes and turns it off',
    async () => {
      const pia = await createUser(svc, { role: 'pair_programmer', username: 'pia' });
      const { page, errors, foreign } = await open(pia, '/security');
      expect(await heading(page)).toBe('Security');
      expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Security' }).getAttribute('aria-current')).toBe('page');
      await expect.poll(() => fact(page, 'Status')).toBe('Off');
      expect(await fact(page, 'Required for your role')).toBe('No');

      const secret = await startEnrollment(page, 'pia');
      const app = authenticator(secret);
      const form = page.getByRole('form', { name: 'Confirm two-factor authentication' });
      const codeField = form.getByLabel('Code from the app');
      expect(await codeField.getAttribute('autocomplete')).toBe('one-time-code');
      expect(await codeField.getAttribute('inputmode')).toBe('numeric');
      await codeField.fill(app.wrong());
      await form.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
      await expect.poll(() => form.getByRole('alert').textContent()).toBe('invalid one-time code');
      expect(await mfaOn(pia)).toBe(false);

      const codes = await confirmEnrollment(page, app);
      for (const c of codes) expect(c).toMatch(/^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/i);
      expect(new Set(codes).size).toBe(10);
      expect(await mfaOn(pia)).toBe(true);
      const panel = codesPanel(page);
      expect(await panel.textContent()).toContain('Save these codes now: you will not see them again.');
      await panel.getByRole('button', { name: 'Copy the codes' }).click();
      await expect.poll(() => panel.getByText('Copied to the clipboard.').count()).toBe(1);
      const copied = await page.evaluate<string>('navigator.clipboard.readText()');
      for (const c of codes) expect(copied).toContain(c);
      const [download] = await Promise.all([page.waitForEvent('download'), panel.getByRole('link', { name: 'Download as a text file' }).click()]);
      expect(download.suggestedFilename()).toBe('agent-org-recovery-codes.txt');
      const saved = await fs.readFile((await download.path()) ?? '', 'utf8');
      expect(saved.split('\n').filter((l) => /^[a-z0-9]{4}-/i.test(l))).toEqual(codes);
      await panel.getByRole('button', { name: 'Done, I saved them' }).click();
      await expect.poll(() => codesPanel(page).count()).toBe(0);
      expect(await page.content()).not.toContain(codes[0]);
      await expect.poll(() => fact(page, 'Status')).toBe('On');
      expect(await fact(page, 'Recovery codes left')).toBe('10 of 10');
      // Neither the secret nor the QR code left for another origin, and the secret is gone from the page.
      expect(foreign).toEqual([]);
      expect(await page.content()).not.toContain(secret);

      // Sign out, sign in: the password first, then the code.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await expect.poll(() => heading(page)).toBe('Sign in');
      await signIn(page, pia);
      const otp = page.getByLabel('One-time code');
      await expect.poll(() => otp.count()).toBe(1);
      expect(await otp.getAttribute('autocomplete')).toBe('one-time-code');
      expect(await otp.getAttribute('inputmode')).toBe('numeric');
      // "One-time code required" is a question here, not an error.
      expect(await page.getByRole('alert').count()).toBe(0);
      await otp.fill(app.wrong());
      await page.getByRole('button', { name: 'Verify and sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('invalid one-time code');
      // The form stays: the code step, for the same user.
      expect(await otp.count()).toBe(1);
      expect(await heading(page)).toBe('Sign in');
      await otp.fill(await app.next());
      await page.getByRole('button', { name: 'Verify and sign in' }).click();
      await expect.poll(() => heading(page)).toBe('Approvals');

      // Sign out, sign in with a recovery code instead; it is used up.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await expect.poll(() => heading(page)).toBe('Sign in');
      await signIn(page, pia);
      await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
      const recovery = page.getByLabel('Recovery code');
      await recovery.fill(codes[0] ?? '');
      await page.getByRole('button', { name: 'Verify and sign in' }).click();
      await expect.poll(() => heading(page)).toBe('Approvals');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Security' }).click();
      await expect.poll(() => fact(page, 'Recovery codes left')).toBe('9 of 10');
      await expect(svc.caller().auth.login({ username: 'pia', password: pia.password, otp: codes[0] ?? '' })).rejects.toMatchObject({ message: 'invalid one-time code' });

      // New recovery codes, for a current code; the old ones stop working.
      await page.getByRole('button', { name: 'New recovery codes…' }).click();
      const regenerate = page.getByRole('form', { name: 'New recovery codes' });
      await regenerate.getByLabel('Code from the app').fill(app.wrong());
      await regenerate.getByRole('button', { name: 'Create new codes' }).click();
      await expect.poll(() => regenerate.getByRole('alert').textContent()).toBe('invalid one-time code');
      await regenerate.getByLabel('Code from the app').fill(await app.next());
      await regenerate.getByRole('button', { name: 'Create new codes' }).click();
      const list = codesPanel(page).getByRole('list', { name: 'Recovery codes' });
      await expect.poll(() => list.getByRole('listitem').count()).toBe(10);
      expect(await codesPanel(page).getByRole('heading').textContent()).toBe('Your new recovery codes');
      const fresh = (await list.getByRole('listitem').allTextContents()).map((c) => c.trim());
      expect(fresh.filter((c) => codes.includes(c))).toEqual([]);
      await codesPanel(page).getByRole('button', { name: 'Done, I saved them' }).click();
      await expect.poll(() => fact(page, 'Recovery codes left')).toBe('10 of 10');
      await expect(svc.caller().auth.login({ username: 'pia', password: pia.password, otp: codes[1] ?? '' })).rejects.toMatchObject({ message: 'invalid one-time code' });

      // Turn off: the password and a code (here a recovery code).
      await page.getByRole('button', { name: 'Turn off two-factor authentication…' }).click();
      const off = page.getByRole('form', { name: 'Turn off two-factor authentication' });
      await off.getByLabel('Password').fill('not the password');
      await off.getByLabel('Code from the app, or a recovery code').fill(fresh[0] ?? '');
      await off.getByRole('button', { name: 'Turn off', exact: true }).click();
      await expect.poll(() => off.getByRole('alert').count()).toBe(1);
      expect(await mfaOn(pia)).toBe(true);
      await off.getByLabel('Password').fill(pia.password);
      await off.getByRole('button', { name: 'Turn off', exact: true }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toBe('Two-factor authentication is off. Signing in needs only your password now.');
      await expect.poll(() => fact(page, 'Status')).toBe('Off');
      expect(await mfaOn(pia)).toBe(false);
      expect(await page.getByRole('button', { name: 'Set up two-factor authentication' }).count()).toBe(1);
      expect(errors).toEqual([]);
    },
    SLOW,
  );
});

describe('a role that requires two-factor authentication', () => {
  it(
    'leads a board member without it to the security page from every page, and lets them on once it is on',
    async () => {
      const bo = await createUser(svc, { role: 'board_member', username: 'bo' });
      const { page, errors } = await open(bo, '/approvals');
      await expect.poll(() => new URL(page.url()).pathname).toBe('/security');
      expect(await heading(page)).toBe('Security');
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('Your role requires two-factor authentication.');
      expect(await fact(page, 'Required for your role')).toBe('Yes');
      // Any other page leads back here.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
      await expect.poll(() => new URL(page.url()).pathname).toBe('/security');
      // The service refuses the rest meanwhile (the dashboard does not ask).
      await expect(bo.caller.approvals.list({})).rejects.toMatchObject({ message: 'two-factor authentication required' });

      const app = authenticator(await startEnrollment(page, 'bo'));
      await confirmEnrollment(page, app);
      await codesPanel(page).getByRole('button', { name: 'Done, I saved them' }).click();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Approvals' }).click();
      await expect.poll(() => heading(page)).toBe('Approvals');
      expect(new URL(page.url()).pathname).toBe('/approvals');
      expect(errors).toEqual([]);
    },
    SLOW,
  );

  it(
    'a board member signing in with the form is led from the login to enroll',
    async () => {
      const bea = await createUser(svc, { role: 'board_member', username: 'bea' });
      const { page, errors } = await openPage(await newContext(browser), '/approvals');
      await expect.poll(() => heading(page)).toBe('Sign in');
      await signIn(page, bea);
      await expect.poll(() => new URL(page.url()).pathname).toBe('/security');
      await expect.poll(() => page.getByRole('button', { name: 'Set up two-factor authentication' }).count()).toBe(1);
      expect(errors).toEqual([]);
    },
    SLOW,
  );
});

describe("the CEO's reset", () => {
  it(
    'the users page marks who has two-factor on, and the CEO turns it off for them after confirming',
    async () => {
      const lou = await createUser(svc, { role: 'manager', username: 'lou' });
      const { secret } = await lou.caller.auth.mfa.enroll();
      await lou.caller.auth.mfa.confirm({ code: await authenticator(secret).next() });
      const { page, errors } = await open(ceo, '/users');
      const card = page.getByRole('article', { name: 'lou', exact: true });
      await expect.poll(() => card.getByText('Two-factor on').count()).toBe(1);
      // Nobody without two-factor gets the action.
      expect(await page.getByRole('article', { name: 'pia', exact: true }).getByRole('button', { name: 'Reset two-factor…' }).count()).toBe(0);
      await card.getByRole('button', { name: 'Reset two-factor…' }).click();
      await card.getByRole('group', { name: 'Confirm resetting two-factor of lou' }).getByRole('button', { name: 'Keep it' }).click();
      expect(await mfaOn(lou)).toBe(true);
      await card.getByRole('button', { name: 'Reset two-factor…' }).click();
      await card.getByRole('button', { name: 'Reset two-factor of lou' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toBe(
        'Two-factor authentication of lou is off: they sign in with their password alone and can set it up again.',
      );
      await expect.poll(() => card.getByText('Two-factor on').count()).toBe(0);
      expect(await mfaOn(lou)).toBe(false);
      expect(errors).toEqual([]);
    },
    SLOW,
  );
});

describe('accessibility and small screens', () => {
  it(
    'the security page (enrolling, then the recovery codes) and the login code step fit 375 px without scrolling sideways, and axe finds no serious violation',
    async () => {
      for (const width of [375, 1100]) {
        const user = await createUser(svc, { role: 'board_member', username: `ana-${String(width)}` });
        const { page, errors } = await open(user, '/security', width);
        await expect.poll(() => fact(page, 'Status')).toBe('Off');
        const app = authenticator(await startEnrollment(page, user.username));
        expect(await horizontalOverflow(page), `enrolling, width ${String(width)}`).toBe(0);
        let violations = await seriousViolations(page);
        expect(violations, describeViolations(violations)).toEqual([]);
        await snap(page, width === 375 ? 'dashboard-security-375' : 'dashboard-security');
        await confirmEnrollment(page, app);
        expect(await horizontalOverflow(page), `codes, width ${String(width)}`).toBe(0);
        violations = await seriousViolations(page);
        expect(violations, describeViolations(violations)).toEqual([]);

        await codesPanel(page).getByRole('button', { name: 'Done, I saved them' }).click();
        await page.getByRole('button', { name: 'Sign out' }).click();
        await expect.poll(() => heading(page)).toBe('Sign in');
        await signIn(page, user);
        await expect.poll(() => page.getByLabel('One-time code').count()).toBe(1);
        expect(await horizontalOverflow(page), `login code, width ${String(width)}`).toBe(0);
        violations = await seriousViolations(page);
        expect(violations, describeViolations(violations)).toEqual([]);
        expect(errors).toEqual([]);
      }
    },
    SLOW,
  );
});
