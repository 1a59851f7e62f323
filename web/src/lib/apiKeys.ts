// API keys as the page shows them (CONTRACT §3.5): what each scope opens, whether a key still works, and the
// expiry date a person picks turned into the `expires_at` the API takes.
import type { Scope } from '../../../src/contracts/apiKeys.ts';

/**
 * What each scope lets a key do, in the order of the contract's scope table. Typed by the API's own `Scope`,
 * so the compiler refuses a scope missing here or one the API does not have (the list itself lives in a zod
 * module, which the first page must not load).
 */
export const SCOPE_TEXT: Record<Scope, string> = {
  'approvals:read': 'Read approval requests',
  'approvals:write': 'Request approvals',
  'approvals:decide': 'Approve and reject requests',
  'reviews:read': "Read a task's review stages",
  'reviews:write': 'Decide review stages',
  'users:read': 'Read users',
  'setup:read': 'Read the company, the agents and the setup catalogues',
  'events:read': 'Follow live events (WebSocket, event stream)',
  'audit:read': 'Read and export the audit log',
};

const isScope = (value: string): value is Scope => Object.hasOwn(SCOPE_TEXT, value);

export const SCOPE_CHOICES: readonly Scope[] = Object.keys(SCOPE_TEXT).filter(isScope);

/** The furthest `expires_at` may lie ahead (CONTRACT §3.5). */
const MAX_LIFETIME_DAYS = 365;
const DAY_MS = 24 * 60 * 60 * 1000;

export type KeyState = 'active' | 'expired' | 'revoked';

export function keyState(key: { revoked_at: string | null; expires_at: string | null }, now: number): KeyState {
  if (key.revoked_at !== null) return 'revoked';
  if (key.expires_at !== null && Date.parse(key.expires_at) <= now) return 'expired';
  return 'active';
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A local calendar day as `<input type="date">` writes it. */
export function dayOf(date: Date): string {
  return `${String(date.getFullYear())}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** The local midnight that ends `day` (YYYY-MM-DD), or null when it is not a date. */
function endOfDay(day: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return null;
  const [year, month, date] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const end = new Date(year, month - 1, date + 1);
  // Date rolls 2026-02-31 over into March: such a day does not exist.
  const start = new Date(year, month - 1, date);
  return start.getFullYear() === year && start.getMonth() === month - 1 && start.getDate() === date ? end : null;
}

/** The days the expiry picker offers: today through the last day whose end is within a year from `now`. */
export function expiryRange(now: Date): { min: string; max: string } {
  const latest = new Date(now.getTime() + MAX_LIFETIME_DAYS * DAY_MS);
  // The last day that ends by `latest` is the one before the day `latest` falls in.
  const lastDay = new Date(latest.getFullYear(), latest.getMonth(), latest.getDate() - 1);
  return { min: dayOf(now), max: dayOf(lastDay) };
}

export type Expiry = { ok: true; expiresAt: string | null } | { ok: false; error: string };

/**
 * The key works through the chosen day and stops at the midnight that ends it (the person's own time); no
 * day: it never expires. A day outside `expiryRange` is refused here, before the API would.
 */
export function expiryFor(day: string, now: Date): Expiry {
  if (day.trim() === '') return { ok: true, expiresAt: null };
  const end = endOfDay(day.trim());
  if (end === null) return { ok: false, error: 'Not a date.' };
  const { min, max } = expiryRange(now);
  if (day < min) return { ok: false, error: 'Choose today or a later day.' };
  if (day > max) return { ok: false, error: `At most a year ahead: ${max} or earlier.` };
  return { ok: true, expiresAt: end.toISOString() };
}
