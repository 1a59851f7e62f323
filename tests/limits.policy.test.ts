// The §5 policy table and the RATE_LIMITS overrides.
import { describe, it, expect } from 'vitest';
import { OperationId, RateLimitOverrides, resolvePolicy } from '../src/limits/policy.ts';

// CONTRACT §5, transcribed: operation → [limit, window_s, subject].
const CONTRACT_TABLE = {
  'auth.setup': [10, 60, 'ip'],
  'auth.login': [10, 60, 'ip'],
  'auth.refresh': [30, 60, 'ip'],
  'auth.change_password': [10, 60, 'user'],
  'auth.ws_ticket': [20, 60, 'user'],
  'auth.sessions_list': [30, 60, 'user'],
  'auth.sessions_revoke': [60, 60, 'user'],
  'approvals.create': [20, 60, 'user'],
  'approvals.approve': [100, 60, 'user'],
  'approvals.reject': [100, 60, 'user'],
  'users.create': [5, 60, 'user'],
  'users.update_role': [10, 60, 'user'],
  'users.delete': [3, 60, 'user'],
  'users.grant_org_role': [10, 60, 'user'],
  'users.revoke_org_role': [10, 60, 'user'],
  'setup.company': [10, 60, 'user'],
  'setup.agent': [30, 60, 'user'],
  'setup.complete': [5, 3600, 'user'],
  'reviews.decide_stage': [50, 60, 'user'],
  // rev. 3
  'api_keys.create': [10, 60, 'user'],
  'api_keys.revoke': [30, 60, 'user'],
  'webhooks.create': [20, 60, 'user'],
  'webhooks.update': [20, 60, 'user'],
  'webhooks.delete': [20, 60, 'user'],
  'webhooks.rotate_secret': [20, 60, 'user'],
  'webhooks.test': [20, 60, 'user'],
  'webhooks.redeliver': [20, 60, 'user'],
  'auth.mfa_enroll': [10, 60, 'user'],
  'auth.mfa_confirm': [10, 60, 'user'],
  'auth.mfa_disable': [10, 60, 'user'],
  'auth.mfa_recovery_codes': [10, 60, 'user'],
  'users.reset_mfa': [10, 60, 'user'],
} as const;

const CONCURRENCY_CAPPED = [
  'auth.login',
  'auth.setup',
  'auth.change_password',
  'users.create',
  'setup.company',
  'setup.complete',
];

describe('5001 per-operation limits follow the contract table', () => {
  it('covers exactly the operations of the table', () => {
    expect([...OperationId.options].sort()).toEqual(Object.keys(CONTRACT_TABLE).sort());
  });

  it.each(Object.entries(CONTRACT_TABLE))('%s is %j (limit, window_s, subject)', (id, [limit, window_s, subject]) => {
    const policy = resolvePolicy().operations[OperationId.parse(id)];
    expect(policy).toMatchObject({ limit, window_s, subject });
  });
});

describe('5002 concurrency cap applies to the operations that hash passwords or rewrite the roster', () => {
  it('is on for exactly those operations', () => {
    const { operations } = resolvePolicy();
    const capped = OperationId.options.filter((id) => operations[id].concurrency);
    expect(capped.sort()).toEqual([...CONCURRENCY_CAPPED].sort());
  });

  it('every operation has a positive timeout for the in-flight TTL', () => {
    const { operations } = resolvePolicy();
    for (const id of OperationId.options) expect(operations[id].timeout_ms).toBeGreaterThan(0);
  });
});

describe('5000 global limits: authenticated 6000/min, anonymous 120/min', () => {
  it('has both buckets', () => {
    expect(resolvePolicy().global).toEqual({
      'global.authenticated': { limit: 6000, window_s: 60 },
      'global.anonymous': { limit: 120, window_s: 60 },
    });
  });
});

describe('RATE_LIMITS overrides', () => {
  it('replaces the limit and window of the named operation only', () => {
    const overrides = RateLimitOverrides.parse({ 'users.delete': { limit: 1, window_s: 30 } });
    const { operations } = resolvePolicy(overrides);
    expect(operations['users.delete']).toMatchObject({ limit: 1, window_s: 30, subject: 'user', concurrency: false });
    expect(operations['users.create']).toMatchObject({ limit: 5, window_s: 60 });
  });

  it('can override the global buckets', () => {
    const overrides = RateLimitOverrides.parse({ 'global.anonymous': { limit: 10, window_s: 60 } });
    expect(resolvePolicy(overrides).global['global.anonymous']).toEqual({ limit: 10, window_s: 60 });
  });

  it('keeps subject, concurrency and timeout of an overridden operation', () => {
    const base = resolvePolicy().operations['auth.login'];
    const overrides = RateLimitOverrides.parse({ 'auth.login': { limit: 3, window_s: 10 } });
    const login = resolvePolicy(overrides).operations['auth.login'];
    expect(login).toEqual({ ...base, limit: 3, window_s: 10 });
  });

  it('rejects an unknown key with a message naming it', () => {
    const result = RateLimitOverrides.safeParse({ 'users.nuke': { limit: 1, window_s: 60 } });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toContain('"users.nuke"');
  });

  it.each([
    ['a zero limit', { limit: 0, window_s: 60 }],
    ['a fractional limit', { limit: 1.5, window_s: 60 }],
    ['a negative window', { limit: 1, window_s: -1 }],
    ['a missing window', { limit: 1 }],
    ['an unknown field', { limit: 1, window_s: 60, burst: 2 }],
  ])('rejects %s', (_name, value) => {
    expect(RateLimitOverrides.safeParse({ 'users.delete': value }).success).toBe(false);
  });

  it('an empty object changes nothing', () => {
    expect(resolvePolicy(RateLimitOverrides.parse({}))).toEqual(resolvePolicy());
  });
});
