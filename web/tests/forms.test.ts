// Forms check input with the API's own schemas and say what is wrong per field (web/src/lib/forms.ts).
import { describe, expect, it } from 'vitest';
import { CreateApprovalInput, CreateUserInput, LoginRequest, RejectInput, SetupAgentRequest, SetupCompanyRequest, SetupRequest } from '../src/api/schemas.ts';
import { check, optionalNumber, optionalText } from '../src/lib/forms.ts';

describe('check with the API schemas', () => {
  it('reports the password limits the server enforces (12..128)', () => {
    expect(check(SetupRequest, { username: 'boss', password: 'short' })).toEqual({ ok: false, errors: { password: 'At least 12 characters.' } });
    expect(check(SetupRequest, { username: 'boss', password: 'x'.repeat(129) })).toEqual({ ok: false, errors: { password: 'At most 128 characters.' } });
    expect(check(SetupRequest, { username: 'boss', password: 'long enough password' }).ok).toBe(true);
  });

  it('reports a blank username and password as required', () => {
    expect(check(LoginRequest, { username: '   ', password: '' })).toEqual({ ok: false, errors: { username: 'Required.', password: 'Required.' } });
  });

  it('refuses a role that is not one of the options', () => {
    expect(check(CreateUserInput, { username: 'nina', password: 'long enough password', role: 'overlord' })).toEqual({
      ok: false,
      errors: { role: 'Choose one of the options.' },
    });
  });

  it("keeps the schema's own words for format rules (action_type, blank reason)", () => {
    const approval = check(CreateApprovalInput, { action_type: 'deploy', title: 't', description: 'd', risk_level: 'low' });
    expect(approval).toEqual({ ok: false, errors: { action_type: 'Must be <category>:<action> with exactly one colon and text on both sides.' } });
    expect(check(RejectInput, { approval_id: 'a', reason: '   ' })).toEqual({ ok: false, errors: { reason: 'Must not be blank.' } });
  });

  it('checks numbers the way the API does (ttl 60..604800, budget 0..1e6)', () => {
    const base = { action_type: 'deploy:prod', title: 't', description: 'd', risk_level: 'low' };
    expect(check(CreateApprovalInput, { ...base, ttl_seconds: 30 })).toEqual({ ok: false, errors: { ttl_seconds: 'At least 60.' } });
    expect(check(CreateApprovalInput, { ...base, ttl_seconds: 'soon' })).toEqual({ ok: false, errors: { ttl_seconds: 'Not a valid value.' } });
    const agent = { name: 'A', role: 'Dev', model_provider: 'p', model_id: 'm', budget_limit_monthly: 2_000_000 };
    expect(check(SetupAgentRequest, agent)).toEqual({ ok: false, errors: { budget_limit_monthly: 'At most 1000000.' } });
  });

  it('returns the parsed input when it passes', () => {
    expect(check(SetupCompanyRequest, { company_name: '  Acme  ', description: null, template_name: 'startup' })).toEqual({
      ok: true,
      data: { company_name: 'Acme', description: null, template_name: 'startup' },
    });
  });
});

describe('field conversions', () => {
  it('blank optional text is null, anything else is kept as typed', () => {
    expect(optionalText('  ')).toBeNull();
    expect(optionalText(' x ')).toBe(' x ');
  });

  it('numbers are parsed; what is not a number stays text for the schema to refuse', () => {
    expect(optionalNumber('')).toBeNull();
    expect(optionalNumber(' 90 ')).toBe(90);
    expect(optionalNumber('ninety')).toBe('ninety');
  });
});
