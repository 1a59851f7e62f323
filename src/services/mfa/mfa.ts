// Two-factor authentication (CONTRACT §3.6): status, TOTP enrollment and confirmation, turning it off, new recovery codes, the CEO's reset, a sign-in's code.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../contracts/actor.ts';
import type { Clock } from '../../contracts/clock.ts';
import type { MfaStatusResponse, RecoveryCodesResponse, TotpEnrollmentResponse } from '../../contracts/mfa.ts';
import type { Role } from '../../contracts/roles.ts';
import type { UserResponse } from '../../contracts/users.ts';
import { ApiError } from '../../errors.ts';
import { recordEvent } from '../../events/record.ts';
import { beginLoginAttempt, recordLoginSuccess, type LoginThrottle } from '../auth/loginThrottle.ts';
import { verifyPassword } from '../auth/passwords.ts';
import { usernameKey } from '../auth/usernameKeys.ts';
import * as users from '../users/store.ts';
import { lockUserResponse, toUserResponse } from '../users/users.ts';
import { newRecoveryCodes, readCode, recoveryCodeHash } from './recoveryCodes.ts';
import { open, seal } from './secretBox.ts';
import * as store from './store.ts';
import { base32Key, matchingStep, newTotpKey, otpauthUrl } from './totp.ts';

export const INVALID_CODE = 'invalid one-time code';
const ALREADY_ON = 'two-factor authentication is already on';
const NOT_ON = 'two-factor authentication is not on';

/** What the operations on one's own two-factor authentication need: `secret` seals and opens TOTP keys (secretBox.ts). */
type Own = { em: EntityManager; clock: Clock; secret: Buffer; actor: Actor };
/** Where a call comes from, for the login throttle that wrong passwords and codes count toward. */
type Guessing = { loginThrottle: LoginThrottle; ip: string };

/** Whether the role must have two-factor authentication on to do anything else (MFA_REQUIRED_ROLES). */
export function mfaRequired(role: Role, requiredRoles: readonly Role[]): boolean {
  return requiredRoles.includes(role);
}

/** `GET /auth/mfa`; whether TOTP is on comes from this request's own session lookup. */
export async function status({ em, actor }: { em: EntityManager; actor: Actor }, requiredRoles: readonly Role[]): Promise<MfaStatusResponse> {
  return {
    totp_enabled: actor.mfaEnabled,
    recovery_codes_remaining: actor.mfaEnabled ? await store.countRecoveryCodes(em, actor.userId) : 0,
    required: mfaRequired(actor.role, requiredRoles),
  };
}

/** A new TOTP key for the caller, pending until confirmed; it replaces a pending one. Its only appearance on the wire is this answer. */
export async function enroll({ em, clock, secret, actor }: Own): Promise<TotpEnrollmentResponse> {
  const key = newTotpKey();
  await em.transactional(async (tx) => {
    if ((await lockAccount(tx, actor.userId)).mfaEnabled) throw ApiError.conflict(ALREADY_ON);
    await store.putTotp(tx, actor.userId, seal(secret, key, actor.userId), clock.now());
  });
  return { secret: base32Key(key), otpauth_url: otpauthUrl(actor.username, key) };
}

/** A code of the pending key turns TOTP on and issues the ten recovery codes, shown in this answer only. */
export async function confirm({ em, clock, secret, actor }: Own, input: { code: string }): Promise<RecoveryCodesResponse> {
  return em.transactional(async (tx) => {
    if ((await lockAccount(tx, actor.userId)).mfaEnabled) throw ApiError.conflict(ALREADY_ON);
    const totp = await store.findTotp(tx, actor.userId);
    if (!totp) throw ApiError.conflict('no two-factor enrollment is pending');
    const now = clock.now();
    if ((await acceptCode(tx, { userId: actor.userId, totp, secret, now }, input.code, { recovery: false })) === null) throw ApiError.validation(INVALID_CODE);
    await switchMfa(tx, actor.userId, true, now, actor.username);
    const codes = await issueRecoveryCodes(tx, actor.userId, now);
    await recordEvent(tx, { type: 'mfa.enabled', actor: actor.username, at: now, target: { type: 'user', id: actor.userId }, data: { username: actor.username } });
    return { recovery_codes: codes };
  });
}

/**
 * Turns the caller's TOTP off with the password and a TOTP or recovery code. Wrong ones count toward the login
 * throttle, as a wrong current password does (CONTRACT §3.7): a session is no faster way to guess either.
 */
export async function disable({ em, clock, secret, actor, loginThrottle, ip }: Own & Guessing, input: { password: string; code: string }): Promise<void> {
  const current = await users.findUser(em, actor.userId);
  if (!current) throw ApiError.sessionRevoked();
  if (!current.mfaEnabled) throw ApiError.conflict(NOT_ON);
  // Counted before the checks, as a login is, so concurrent guesses cannot all pass them.
  await beginLoginAttempt(loginThrottle, current.usernameKey, ip);
  if (current.passwordHash === null || !(await verifyPassword(current.passwordHash, input.password))) throw ApiError.validation('password is incorrect');
  await em.transactional(async (tx) => {
    if (!(await lockAccount(tx, actor.userId)).mfaEnabled) throw ApiError.conflict(NOT_ON);
    const totp = await store.findTotp(tx, actor.userId);
    const now = clock.now();
    const used = totp ? await acceptCode(tx, { userId: actor.userId, totp, secret, now }, input.code, { recovery: true }) : null;
    if (used === null) throw ApiError.validation(INVALID_CODE);
    await turnOffMfa(tx, actor.userId, now, actor.username);
    await recordEvent(tx, { type: 'mfa.disabled', actor: actor.username, at: now, target: { type: 'user', id: actor.userId }, data: { username: actor.username, code_kind: used } });
  });
  await recordLoginSuccess(loginThrottle, current.usernameKey, ip);
}

/** Ten new recovery codes for a current TOTP code; the old ones stop working. A wrong code counts toward the login throttle. */
export async function regenerateRecoveryCodes({ em, clock, secret, actor, loginThrottle, ip }: Own & Guessing, input: { code: string }): Promise<RecoveryCodesResponse> {
  if (!actor.mfaEnabled) throw ApiError.conflict(NOT_ON);
  const key = usernameKey(actor.username);
  await beginLoginAttempt(loginThrottle, key, ip);
  const codes = await em.transactional(async (tx) => {
    if (!(await lockAccount(tx, actor.userId)).mfaEnabled) throw ApiError.conflict(NOT_ON);
    const totp = await store.findTotp(tx, actor.userId);
    const now = clock.now();
    if (!totp || (await acceptCode(tx, { userId: actor.userId, totp, secret, now }, input.code, { recovery: false })) === null) throw ApiError.validation(INVALID_CODE);
    const issued = await issueRecoveryCodes(tx, actor.userId, now);
    await recordEvent(tx, { type: 'mfa.recovery_codes_regenerated', actor: actor.username, at: now, target: { type: 'user', id: actor.userId }, data: { username: actor.username } });
    return issued;
  });
  await recordLoginSuccess(loginThrottle, key, ip);
  return { recovery_codes: codes };
}

/** The CEO turns a user's two-factor authentication off (a lost phone): the user then signs in with the password alone and may enroll again. */
export async function resetMfa({ em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor }, input: { user_id: string }): Promise<void> {
  await em.transactional(async (tx) => {
    const target = await lockUserResponse(tx, input.user_id);
    if (!target.mfa_enabled) throw ApiError.conflict(`${NOT_ON} for this user`);
    const now = clock.now();
    await turnOffMfa(tx, target.id, now, actor.username);
    await recordEvent(tx, { type: 'mfa.reset', actor: actor.username, at: now, target: { type: 'user', id: target.id }, data: { username: target.username } });
  });
}

/**
 * Forgets the user's key and recovery codes and records the `user.updated` of `mfa_enabled` turning false
 * (409/4000 when it was not on). For a caller holding the user's lock in its transaction: the owner's disable,
 * the CEO's reset, the operator's `reset-mfa`, each recording its own audit entry besides.
 */
export async function turnOffMfa(tx: EntityManager, userId: string, now: Date, actor: string | null): Promise<UserResponse> {
  await store.deleteMfa(tx, userId);
  return switchMfa(tx, userId, false, now, actor);
}

/**
 * The sign-in's one-time code, for a user with TOTP on, once the password was verified: a current TOTP code not
 * used before, or an unused recovery code; either is used up. The key came with the read of the user
 * (users/store.ts findLoginUser), so this costs one statement, the one that uses the code up.
 */
export async function acceptLoginCode(
  { em, clock, secret }: { em: EntityManager; clock: Clock; secret: Buffer },
  user: { id: string; totp: store.StoredTotp | null },
  otp: string,
): Promise<boolean> {
  if (!user.totp) return false;
  return (await acceptCode(em, { userId: user.id, totp: user.totp, secret, now: clock.now() }, otp, { recovery: true })) !== null;
}

/**
 * Whether `typed` is a code of the user's own that was not used before, which it then uses up; TOTP codes only
 * unless `recovery`. A TOTP code is refused when a code of its step or a later one was accepted already, checked
 * first against what was read (no write for a plain replay) and then decided by the compare-and-set.
 */
async function acceptCode(
  em: EntityManager,
  { userId, totp, secret, now }: { userId: string; totp: store.StoredTotp; secret: Buffer; now: Date },
  typed: string,
  accept: { recovery: boolean },
): Promise<'totp' | 'recovery_code' | null> {
  const code = readCode(typed);
  if (code.kind === 'totp') {
    const step = matchingStep(open(secret, totp.secret, userId), code.code, now);
    if (step === null || (totp.lastUsedStep !== null && step <= totp.lastUsedStep)) return null;
    return (await store.useStep(em, userId, step)) ? 'totp' : null;
  }
  if (code.kind === 'recovery' && accept.recovery) return (await store.useRecoveryCode(em, userId, code.hash)) ? 'recovery_code' : null;
  return null;
}

/** Locks the user's row for the transaction (every change of a user's two-factor state takes it first) and reads it. */
async function lockAccount(tx: EntityManager, userId: string): Promise<users.StoredUser> {
  const user = (await users.lockUser(tx, userId)) ? await users.findUser(tx, userId) : undefined;
  // The caller's own account is gone: deleted while this request ran, which ended its session.
  if (!user) throw ApiError.sessionRevoked();
  return user;
}

async function issueRecoveryCodes(tx: EntityManager, userId: string, now: Date): Promise<string[]> {
  const codes = newRecoveryCodes();
  await store.replaceRecoveryCodes(tx, userId, codes.map(recoveryCodeHash), now);
  return codes;
}

/** `mfa_enabled` turns on or off: a change of the user's representation, so a `user.updated` event (CONTRACT §3.6). */
async function switchMfa(tx: EntityManager, userId: string, enabled: boolean, now: Date, actor: string | null): Promise<UserResponse> {
  if (!(await users.setMfaEnabled(tx, userId, enabled, now))) throw ApiError.conflict(enabled ? ALREADY_ON : NOT_ON);
  const user = await users.findUserWithGrants(tx, userId);
  if (!user) throw ApiError.notFound('user not found');
  const updated = toUserResponse(user);
  await recordEvent(tx, { type: 'user.updated', actor, at: now, data: updated });
  return updated;
}
