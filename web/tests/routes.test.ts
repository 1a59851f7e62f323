// Which page a location shows, given setup status and who is signed in (web/src/lib/routes.ts).
import { describe, expect, it } from 'vitest';
import { matchPattern, matchRoute, resolve, safeNext } from '../src/lib/routes.ts';

const setupDone = { needs_admin: false, needs_setup: false };
const setupOpen = { needs_admin: false, needs_setup: true };
const noAdmin = { needs_admin: true, needs_setup: true };
const ceo = { username: 'boss', role: 'ceo', must_change_password: false };
const observer = { username: 'olga', role: 'observer', must_change_password: false };
const fresh = { username: 'nina', role: 'manager', must_change_password: true };

describe('matchRoute', () => {
  it('names the page and its parameters', () => {
    expect(matchRoute('/approvals')).toEqual({ page: 'approvals', params: {} });
    expect(matchRoute('/reviews/task%2F7')).toEqual({ page: 'review', params: { taskId: 'task/7' } });
    expect(matchRoute('/users/')).toEqual({ page: 'users', params: {} });
    expect(matchRoute('/nowhere').page).toBe('not-found');
    expect(matchPattern('/reviews/:taskId', '/reviews/')).toBeNull();
    expect(matchPattern('/reviews/:taskId', '/reviews/%E0%A4%A')).toBeNull();
  });
});

describe('resolve', () => {
  it('waits for setup status, then for the signed-in user', () => {
    expect(resolve('/approvals', '', undefined, undefined)).toEqual({ kind: 'loading' });
    expect(resolve('/approvals', '', setupDone, undefined)).toEqual({ kind: 'loading' });
  });

  it('sends everyone to first-run setup until a CEO exists, and nobody there afterwards', () => {
    expect(resolve('/approvals', '', noAdmin, undefined)).toEqual({ kind: 'redirect', to: '/first-run' });
    expect(resolve('/first-run', '', noAdmin, undefined)).toMatchObject({ kind: 'page', page: 'first-run' });
    expect(resolve('/first-run', '', setupDone, null)).toEqual({ kind: 'redirect', to: '/login' });
  });

  it('sends a signed-out visitor to login, remembering where they were going', () => {
    expect(resolve('/approvals', '?status=all', setupDone, null)).toEqual({ kind: 'redirect', to: '/login?next=%2Fapprovals%3Fstatus%3Dall' });
    expect(resolve('/', '', setupDone, null)).toEqual({ kind: 'redirect', to: '/login' });
    expect(resolve('/login', '?next=%2Fusers', setupDone, null)).toMatchObject({ kind: 'page', page: 'login' });
  });

  it('takes a signed-in user from login to `next`, or home', () => {
    expect(resolve('/login', '?next=%2Fusers', setupDone, observer)).toEqual({ kind: 'redirect', to: '/users' });
    expect(resolve('/login', '?next=https%3A%2F%2Fevil.example', setupDone, observer)).toEqual({ kind: 'redirect', to: '/approvals' });
    expect(resolve('/login', '', setupOpen, ceo)).toEqual({ kind: 'redirect', to: '/setup' });
  });

  it('home is the wizard for the CEO while setup is open, else the approvals queue', () => {
    expect(resolve('/', '', setupOpen, ceo)).toEqual({ kind: 'redirect', to: '/setup' });
    expect(resolve('/', '', setupDone, ceo)).toEqual({ kind: 'redirect', to: '/approvals' });
    expect(resolve('/', '', setupOpen, observer)).toEqual({ kind: 'redirect', to: '/approvals' });
  });

  it('keeps a user who must change the password on that page', () => {
    expect(resolve('/approvals', '', setupDone, fresh)).toEqual({ kind: 'redirect', to: '/change-password' });
    expect(resolve('/change-password', '', setupDone, fresh)).toMatchObject({ kind: 'page', page: 'change-password' });
    expect(resolve('/change-password', '', setupDone, observer)).toMatchObject({ kind: 'page', page: 'change-password' });
  });

  it('shows not-found for unknown paths to a signed-in user', () => {
    expect(resolve('/nowhere', '', setupDone, observer)).toMatchObject({ kind: 'page', page: 'not-found' });
  });
});

describe('safeNext', () => {
  it('follows only paths on this site', () => {
    expect(safeNext('/approvals?status=all')).toBe('/approvals?status=all');
    for (const bad of ['//evil.example/x', '/\\evil.example', 'https://evil.example', 'javascript:alert(1)', '', null]) expect(safeNext(bad)).toBeNull();
  });
});
