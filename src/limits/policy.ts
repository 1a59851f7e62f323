// The rate-limit policy table of CONTRACT §5: operation ids, their limits, and the RATE_LIMITS overrides.
import { z } from 'zod';
import { ConfigError } from '../config.ts';

export const OperationId = z.enum([
  'auth.setup',
  'auth.login',
  'auth.refresh',
  'auth.change_password',
  'auth.ws_ticket',
  'auth.sessions_list',
  'auth.sessions_revoke',
  'approvals.create',
  'approvals.approve',
  'approvals.reject',
  'users.create',
  'users.update_role',
  'users.delete',
  'users.grant_org_role',
  'users.revoke_org_role',
  'setup.company',
  'setup.agent',
  'setup.complete',
  'reviews.decide_stage',
  'api_keys.create',
  'api_keys.revoke',
  'auth.mfa_enroll',
  'auth.mfa_confirm',
  'auth.mfa_disable',
  'auth.mfa_recovery_codes',
  'users.reset_mfa',
  'webhooks.create',
  'webhooks.update',
  'webhooks.delete',
  'webhooks.rotate_secret',
  'webhooks.test',
  'webhooks.redeliver',
]);
export type OperationId = z.infer<typeof OperationId>;

export const GlobalBucket = z.enum(['global.authenticated', 'global.anonymous']);
export type GlobalBucket = z.infer<typeof GlobalBucket>;

export type LimitSubject = 'ip' | 'user';

export interface WindowPolicy {
  readonly limit: number;
  readonly window_s: number;
}

export interface OperationPolicy extends WindowPolicy {
  readonly subject: LimitSubject;
  /** One call in flight per (operation, subject) — 5002. */
  readonly concurrency: boolean;
  /** TTL of the in-flight slot, so a crashed holder cannot block the subject for longer than this. */
  readonly timeout_ms: number;
}

export interface ResolvedPolicy {
  readonly operations: Readonly<Record<OperationId, OperationPolicy>>;
  readonly global: Readonly<Record<GlobalBucket, WindowPolicy>>;
}

// 30 s covers an Argon2id hash (well under a second) or a roster rewrite many times over, yet a holder
// that died mid-request frees the subject within half a minute instead of locking it out.
const DEFAULT_TIMEOUT_MS = 30_000;

const MINUTE = 60;

function op(limit: number, window_s: number, subject: LimitSubject, concurrency = false): OperationPolicy {
  return { limit, window_s, subject, concurrency, timeout_ms: DEFAULT_TIMEOUT_MS };
}

export const OPERATION_POLICIES: Readonly<Record<OperationId, OperationPolicy>> = Object.freeze({
  'auth.setup': op(10, MINUTE, 'ip', true),
  'auth.login': op(10, MINUTE, 'ip', true),
  'auth.refresh': op(30, MINUTE, 'ip'),
  'auth.change_password': op(10, MINUTE, 'user', true),
  'auth.ws_ticket': op(20, MINUTE, 'user'),
  'auth.sessions_list': op(30, MINUTE, 'user'),
  'auth.sessions_revoke': op(60, MINUTE, 'user'),
  'approvals.create': op(20, MINUTE, 'user'),
  'approvals.approve': op(100, MINUTE, 'user'),
  'approvals.reject': op(100, MINUTE, 'user'),
  'users.create': op(5, MINUTE, 'user', true),
  'users.update_role': op(10, MINUTE, 'user'),
  'users.delete': op(3, MINUTE, 'user'),
  'users.grant_org_role': op(10, MINUTE, 'user'),
  'users.revoke_org_role': op(10, MINUTE, 'user'),
  'setup.company': op(10, MINUTE, 'user', true),
  'setup.agent': op(30, MINUTE, 'user'),
  'setup.complete': op(5, 3600, 'user', true),
  'reviews.decide_stage': op(50, MINUTE, 'user'),
  'api_keys.create': op(10, MINUTE, 'user'),
  'api_keys.revoke': op(30, MINUTE, 'user'),
  'auth.mfa_enroll': op(10, MINUTE, 'user'),
  'auth.mfa_confirm': op(10, MINUTE, 'user'),
  'auth.mfa_disable': op(10, MINUTE, 'user'),
  'auth.mfa_recovery_codes': op(10, MINUTE, 'user'),
  'users.reset_mfa': op(10, MINUTE, 'user'),
  'webhooks.create': op(20, MINUTE, 'user'),
  'webhooks.update': op(20, MINUTE, 'user'),
  'webhooks.delete': op(20, MINUTE, 'user'),
  'webhooks.rotate_secret': op(20, MINUTE, 'user'),
  'webhooks.test': op(20, MINUTE, 'user'),
  'webhooks.redeliver': op(20, MINUTE, 'user'),
});

export const GLOBAL_POLICIES: Readonly<Record<GlobalBucket, WindowPolicy>> = Object.freeze({
  'global.authenticated': { limit: 6000, window_s: MINUTE },
  'global.anonymous': { limit: 120, window_s: MINUTE },
});

// The memory store expires keys with setTimeout, which fires at once for delays above 2^31-1 ms
// (~24.8 days); a sliding window keeps keys for 2 × window_s, so one day is a safe ceiling.
const MAX_WINDOW_S = 86_400;
// Counters live in a PostgreSQL `integer` column (see RATE_LIMIT_TABLE_DDL).
const MAX_LIMIT = 1_000_000_000;

const WindowOverride = z.strictObject({
  limit: z.int().min(1).max(MAX_LIMIT),
  window_s: z.int().min(1).max(MAX_WINDOW_S),
});

const OverrideKey = z.enum([...OperationId.options, ...GlobalBucket.options]);

/**
 * The `RATE_LIMITS` environment value (already JSON-parsed): operation id or global bucket → window.
 * An unknown key fails with zod's own `Unrecognized key: "users.nuke"`, which names it.
 */
export const RateLimitOverrides = z.partialRecord(OverrideKey, WindowOverride);
export type RateLimitOverrides = z.infer<typeof RateLimitOverrides>;

/** The policy table with `RATE_LIMITS` overrides applied; subject, concurrency and timeout are not overridable. */
export function resolvePolicy(overrides: RateLimitOverrides = {}): ResolvedPolicy {
  const operations: Record<OperationId, OperationPolicy> = { ...OPERATION_POLICIES };
  for (const id of OperationId.options) {
    const override = overrides[id];
    if (override !== undefined) operations[id] = Object.freeze({ ...operations[id], ...override });
  }
  const global: Record<GlobalBucket, WindowPolicy> = { ...GLOBAL_POLICIES };
  for (const bucket of GlobalBucket.options) {
    const override = overrides[bucket];
    if (override !== undefined) global[bucket] = Object.freeze({ ...global[bucket], ...override });
  }
  return Object.freeze({ operations: Object.freeze(operations), global: Object.freeze(global) });
}

/** Validates the parsed `RATE_LIMITS` value at boot; the ConfigError names the offending key. */
export function parseRateLimitOverrides(value: unknown): RateLimitOverrides {
  const parsed = RateLimitOverrides.safeParse(value);
  if (parsed.success) return parsed.data;
  // Operation ids contain dots, so keys are bracketed: RATE_LIMITS["users.delete"].limit.
  const where = (path: readonly PropertyKey[]) =>
    path.map((part, i) => (i === 0 ? `[${JSON.stringify(String(part))}]` : `.${String(part)}`)).join('');
  const lines = parsed.error.issues.map((issue) => `  RATE_LIMITS${where(issue.path)}: ${issue.message}`);
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}
