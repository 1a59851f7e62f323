// Which page a location shows, given setup status and who is signed in (web/src/lib/routes.ts).
import { describe, expect, it } from 'vitest';
import { matchPattern, matchRoute, resolve, safeNext } from '../src/lib/routes.ts';

const setupDone = { needs_admin: false, needs_setup: false };
const setupOpen = { needs_admin: false, needs_setup: true };
const noAdmin = { needs_admin: true, needs_setup: true };
const ceo = { username: 'boss', role: 'ceo', must_change_password: false };
const observer = { username: 'olga', role: 'observer', must_change_password: false };
const fresh = { username: 'nina', role: 'manager', must_change_password: true };
/** The dashboard's own origin, as `window.location.origin` gives it. */
const SITE = 'http://127.0.0.1:8000';

describe('matchRoute', () => {
  it('names the page and its parameters', () => {
    expect(matchRoute('/approvals')).toEqual({ page: 'approvals', params: {} });
    expect(matchRoute('/reviews/task%2F7')).toEqual({ page: 'review', params: { taskId: 'task/7' } });
    expect(matchRoute('/users/')).toEqual({ page: 'users', params: {} });
    expect(matchRoute('/api-keys')).toEqual({ page: 'api-keys', params: {} });
    expect(matchRoute('/nowhere').page).toBe('not-found');
    expect(matchPattern('/reviews/:taskId', '/reviews/')).toBeNull();
    expect(matchPattern('/reviews/:taskId', '/reviews/%E0%A4%A')).toBeNull();
  });
});

describe('resolve', () => {
  it('waits for setup status, then for the signed-in user', () => {
    expect(resolve('/approvals', '', undefined, undefined, SITE)).toEqual({ kind: 'loading' });
    expect(resolve('/approvals', '', setupDone, undefined, SITE)).toEqual({ kind: 'loading' });
  });

  it('sends everyone to first-run setup until a CEO exists, and nobody there afterwards', () => {
    expect(resolve('/approvals', '', noAdmin, undefined, SITE)).toEqual({ kind: 'redirect', to: '/first-run' });
    expect(resolve('/first-run', '', noAdmin, undefined, SITE)).toMatchObject({ kind: 'page', page: 'first-run' });
    expect(resolve('/first-run', '', setupDone, null, SITE)).toEqual({ kind: 'redirect', to: '/login' });
  });

  it('sends a signed-out visitor to login, remembering where they were going', () => {
    expect(resolve('/approvals', '?status=all', setupDone, null, SITE)).toEqual({ kind: 'redirect', to: '/login?next=%2Fapprovals%3Fstatus%3Dall' });
    expect(resolve('/', '', setupDone, null, SITE)).toEqual({ kind: 'redirect', to: '/login' });
    expect(resolve('/login', '?next=%2Fusers', setupDone, null, SITE)).toMatchObject({ kind: 'page', page: 'login' });
  });

  it('takes a signed-in user from login to `next`, or home', () => {
    expect(resolve('/login', '?next=%2Fusers', setupDone, observer, SITE)).toEqual({ kind: 'redirect', to: '/users' });
    expect(resolve('/login', '?next=https%3A%2F%2Fevil.example', setupDone, observer, SITE)).toEqual({ kind: 'redirect', to: '/approvals' });
    expect(resolve('/login', '', setupOpen, ceo, SITE)).toEqual({ kind: 'redirect', to: '/setup' });
  });

  it('home is the wizard for the CEO while setup is open, else the approvals queue', () => {
    expect(resolve('/', '', setupOpen, ceo, SITE)).toEqual({ kind: 'redirect', to: '/setup' });
    expect(resolve('/', '', setupDone, ceo, SITE)).toEqual({ kind: 'redirect', to: '/approvals' });
    expect(resolve('/', '', setupOpen, observer, SITE)).toEqual({ kind: 'redirect', to: '/approvals' });
  });

  it('keeps a user who must change the password on that page', () => {
    expect(resolve('/approvals', '', setupDone, fresh, SITE)).toEqual({ kind: 'redirect', to: '/change-password' });
    expect(resolve('/change-password', '', setupDone, fresh, SITE)).toMatchObject({ kind: 'page', page: 'change-password' });
    expect(resolve('/change-password', '', setupDone, observer, SITE)).toMatchObject({ kind: 'page', page: 'change-password' });
  });

  it('leads a user whose role requires two-factor authentication, not on yet, to the security page from every path, after the password change', () => {
    const due = { username: 'bo', role: 'board_member', must_change_password: false, mfa_enrollment_due: true };
    for (const path of ['/', '/approvals', '/users', '/sessions', '/nowhere']) expect(resolve(path, '', setupDone, due, SITE)).toEqual({ kind: 'redirect', to: '/security' });
    expect(resolve('/security', '', setupDone, due, SITE)).toMatchObject({ kind: 'page', page: 'security' });
    expect(resolve('/security', '', setupDone, { ...due, must_change_password: true }, SITE)).toEqual({ kind: 'redirect', to: '/change-password' });
    expect(resolve('/approvals', '', setupDone, { ...due, mfa_enrollment_due: false }, SITE)).toMatchObject({ kind: 'page', page: 'approvals' });
  });

  it('shows not-found for unknown paths to a signed-in user', () => {
    expect(resolve('/nowhere', '', setupDone, observer, SITE)).toMatchObject({ kind: 'page', page: 'not-found' });
  });
});

describe('safeNext', () => {
  it("a `next` target is followed only when it resolves to the dashboard's own origin (CONTRACT §3.7)", () => {
    expect(safeNext('/approvals?x=1#y', SITE)).toBe('/approvals?x=1#y');
    expect(safeNext('/approvals?status=all', SITE)).toBe('/approvals?status=all');
    // Spelled as a full URL of this origin, it is followed as the path it names.
    expect(safeNext(`${SITE}/users`, SITE)).toBe('/users');
    const elsewhere = [
      '/\t/evil.example',
      '/\n/evil.example',
      '/\r\n/evil.example',
      '\t//evil.example',
      '//evil.example',
      '//evil.example/x',
      '/\\evil.example',
      '\\\\evil.example',
      'https://evil.example',
      'https:evil.example',
      'http://127.0.0.1:8001/approvals',
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      ' javascript:alert(1)',
      'data:text/html,hi',
      'http://[',
      '',
      null,
    ];
    for (const bad of elsewhere) expect(safeNext(bad, SITE), JSON.stringify(bad)).toBeNull();
  });

  it('a signed-in user is never sent to another origin from login', () => {
    expect(resolve('/login', `?${new URLSearchParams({ next: '/\t/evil.example' }).toString()}`, setupDone, observer, SITE)).toEqual({ kind: 'redirect', to: '/approvals' });
    expect(resolve('/login', '?next=%2F%2Fevil.example', setupDone, observer, SITE)).toEqual({ kind: 'redirect', to: '/approvals' });
  });
});
