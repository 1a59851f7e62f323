// The API keys page's rules without the DOM (web/src/lib/apiKeys.ts): the scopes offered, a key's state, the expiry date → expires_at.
import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/contracts/apiKeys.ts';
import { CreateApiKeyInput, CreateUserInput } from '../src/api/schemas.ts';
import { dayOf, expiryFor, expiryRange, keyState, SCOPE_CHOICES, SCOPE_TEXT } from '../src/lib/apiKeys.ts';
import { check } from '../src/lib/forms.ts';
import { passwordPolicy } from '../src/lib/passwords.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('the scopes the form offers', () => {
  it("are the API's nine scopes in the contract's order, each with a description", () => {
    expect(SCOPE_CHOICES).toEqual([...SCOPES]);
    for (const scope of SCOPES) expect(SCOPE_TEXT[scope].length).toBeGreaterThan(0);
  });
});

describe('keyState', () => {
  const now = Date.parse('2026-11-27T12:00:00.000Z');
  it('a revoked key is revoked even when it has also expired; an expired one from its expires_at on', () => {
    expect(keyState({ revoked_at: '2026-11-27T11:00:00.000Z', expires_at: '2026-11-01T00:00:00.000Z' }, now)).toBe('revoked');
    expect(keyState({ revoked_at: null, expires_at: '2026-11-27T12:00:00.000Z' }, now)).toBe('expired');
    expect(keyState({ revoked_at: null, expires_at: '2026-11-27T12:00:00.001Z' }, now)).toBe('active');
    expect(keyState({ revoked_at: null, expires_at: null }, now)).toBe('active');
  });
});

describe('expiryFor: the day a person picks as the expires_at the API takes', () => {
  const now = new Date(2026, 10, 27, 15, 30);

  it('no day: the key never expires', () => {
    expect(expiryFor('', now)).toEqual({ ok: true, expiresAt: null });
    expect(expiryFor('  ', now)).toEqual({ ok: true, expiresAt: null });
  });

  it('the key works through the chosen day and stops at the local midnight that ends it', () => {
    expect(expiryFor('2026-11-27', now)).toEqual({ ok: true, expiresAt: new Date(2026, 10, 28).toISOString() });
    expect(expiryFor('2026-12-31', now)).toEqual({ ok: true, expiresAt: new Date(2027, 0, 1).toISOString() });
  });

  it('offers today through the last day whose end is at most 365 days ahead, and refuses days outside', () => {
    const { min, max } = expiryRange(now);
    expect(min).toBe('2026-11-27');
    const last = expiryFor(max, now);
    expect(last.ok).toBe(true);
    if (last.ok && last.expiresAt !== null) expect(Date.parse(last.expiresAt) - now.getTime()).toBeLessThanOrEqual(365 * DAY_MS);
    const after = new Date(Date.parse(`${max}T12:00:00`) + DAY_MS);
    expect(expiryFor(dayOf(after), now)).toEqual({ ok: false, error: `At most a year ahead: ${max} or earlier.` });
    expect(expiryFor('2026-11-26', now)).toEqual({ ok: false, error: 'Choose today or a later day.' });
  });

  it('refuses what is not a date', () => {
    expect(expiryFor('2027-02-31', now)).toEqual({ ok: false, error: 'Not a date.' });
    expect(expiryFor('tomorrow', now)).toEqual({ ok: false, error: 'Not a date.' });
  });
});

describe('the create forms checked with the API schemas', () => {
  it('an API key needs a name that is not blank and scopes without repeats', () => {
    expect(check(CreateApiKeyInput, { name: '  ', scopes: ['users:read'] })).toEqual({ ok: false, errors: { name: 'Must not be blank.' } });
    expect(check(CreateApiKeyInput, { name: 'ci', scopes: ['users:read', 'users:read'] })).toEqual({ ok: false, errors: { scopes: 'Must not repeat a scope.' } });
    expect(check(CreateApiKeyInput, { name: 'ci', scopes: ['users:read'], expires_at: null }).ok).toBe(true);
  });

  it('a service account is created without a password; a person with an empty one is refused (the form sends the field as typed)', () => {
    expect(check(CreateUserInput, { username: 'bot', role: 'manager', kind: 'service' }).ok).toBe(true);
    expect(check(CreateUserInput, { username: 'nina', password: '', role: 'manager', kind: 'human' })).toEqual({ ok: false, errors: { password: 'At least 12 characters.' } });
  });
});

describe('passwordPolicy', () => {
  it('says the whole policy: the length bounds, common passwords and the username', () => {
    expect(passwordPolicy('your')).toBe('12 to 128 characters, not a commonly used password, and not containing your username.');
    expect(passwordPolicy('the', 14)).toBe('14 to 128 characters, not a commonly used password, and not containing the username.');
  });
});
