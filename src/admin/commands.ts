// The operators' commands (npm run admin, CONTRACT §4.10, §3.5, §3.6): reset a password or two-factor authentication, list users, revoke sessions or API keys.
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent } from '../events/record.ts';
import { ADMIN_ORIGIN, withOrigin } from '../services/audit/origin.ts';
import { revokeUserApiKeys } from '../services/apiKeys/apiKeys.ts';
import { hashPassword, passwordPolicyViolation } from '../services/auth/passwords.ts';
import { turnOffMfa } from '../services/mfa/mfa.ts';
import { revokeUserSessions } from '../services/auth/sessions.ts';
import { liveSessions } from '../services/auth/store.ts';
import { usernameKey } from '../services/auth/usernameKeys.ts';
import { allUsers, findUserByKeyWithGrants, findUserWithGrants, lockUser, setTemporaryPassword } from '../services/users/store.ts';
import { toUserResponse } from '../services/users/users.ts';
import type { Clock } from '../contracts/clock.ts';

/** A failure the operator can act on; the command prints its message as one line and changes nothing. */
export class AdminError extends Error {
  override name = 'AdminError';
}

type Env = { em: EntityManager; clock: Clock };

/**
 * Runs a command as an operator's (CONTRACT §4.13): each records its `admin.<command>` entry in the
 * transaction of what it changes, and every entry it causes (a `user.updated`, each `session.revoked`) has
 * the actor type `admin`.
 */
function asOperator<T>(work: () => Promise<T>): Promise<T> {
  return withOrigin(ADMIN_ORIGIN, work);
}

/** The operating-system account running the command: the one name an operator at the console has. */
function operator(): string {
  try {
    return userInfo().username;
  } catch {
    // No entry in the password database (a container's arbitrary uid).
    return process.env.USER ?? `uid ${String(process.getuid?.() ?? 'unknown')}`;
  }
}

/**
 * Gives the user a generated temporary password (returned, to be shown once), requires a new one at the
 * next sign-in and ends every session, all in one transaction: the way back in when the CEO's is lost.
 * Events (docs/events.md): `user.updated` when must_change_password turns true, and one `session.revoked`
 * (`password_changed`) per session; actor null, as an operator at the console has no username in the API.
 */
export async function resetPassword({ em, clock }: Env, username: string): Promise<{ username: string; password: string; revokedSessions: number }> {
  return asOperator(async () => {
    const user = await findUser(em, username);
    // A program has no password to reset (CONTRACT §3.5); its way back in is a new API key.
    if (user.kind === 'service') throw new AdminError(`${user.username} is a service account: it has no password (issue it a new API key instead)`);
    const password = temporaryPassword(user.username);
    const passwordHash = await hashPassword(password);
    const revokedSessions = await em.transactional(async (tx) => {
      if (!(await lockUser(tx, user.id))) throw new AdminError(`no user named ${JSON.stringify(username)}`);
      const now = clock.now();
      const wasInitial = (await findUserWithGrants(tx, user.id))?.mustChangePassword === true;
      await setTemporaryPassword(tx, user.id, passwordHash, now);
      const updated = await findUserWithGrants(tx, user.id);
      if (!wasInitial && updated) await recordEvent(tx, { type: 'user.updated', actor: null, at: now, data: toUserResponse(updated) });
      const revoked = await revokeUserSessions({ em: tx, clock }, user.id, 'password_changed', { username: null });
      const data = { username: user.username, sessions_revoked: revoked, operator: operator() };
      await recordEvent(tx, { type: 'admin.reset-password', actor: null, at: now, target: { type: 'user', id: user.id }, data });
      return revoked;
    });
    return { username: user.username, password, revokedSessions };
  });
}

/**
 * 18 random bytes: 24 URL-safe characters, inside the 12..128 policy and easy to copy from a terminal. The
 * policy is checked all the same (the name could turn up by chance): a refused draw is drawn again.
 */
function temporaryPassword(username: string): string {
  const draw = () => randomBytes(18).toString('base64url');
  let password = draw();
  while (passwordPolicyViolation(password, username) !== null) password = draw();
  return password;
}

/** Ends every session of the user (one `session.revoked`, reason `revoked`, actor null, each); returns how many were live. */
export async function revokeSessions({ em, clock }: Env, username: string): Promise<{ username: string; revokedSessions: number }> {
  return asOperator(async () => {
    const user = await findUser(em, username);
    const revokedSessions = await em.transactional(async (tx) => {
      const revoked = await revokeUserSessions({ em: tx, clock }, user.id, 'revoked', { username: null });
      const data = { username: user.username, sessions_revoked: revoked, operator: operator() };
      await recordEvent(tx, { type: 'admin.revoke-sessions', actor: null, at: clock.now(), target: { type: 'user', id: user.id }, data });
      return revoked;
    });
    return { username: user.username, revokedSessions };
  });
}

/** Revokes every API key of the user (sessions and password stay as they are); returns how many were unrevoked. */
export async function revokeApiKeys({ em, clock }: Env, username: string): Promise<{ username: string; revokedKeys: number }> {
  return asOperator(async () => {
    const user = await findUser(em, username);
    const revokedKeys = await em.transactional(async (tx) => {
      const revoked = await revokeUserApiKeys({ em: tx, clock }, user.id);
      const data = { username: user.username, keys_revoked: revoked, operator: operator() };
      await recordEvent(tx, { type: 'admin.revoke-api-keys', actor: null, at: clock.now(), target: { type: 'user', id: user.id }, data });
      return revoked;
    });
    return { username: user.username, revokedKeys };
  });
}

/**
 * Turns the user's two-factor authentication off (a lost phone, the CEO's included): their key and recovery
 * codes are forgotten, they sign in with the password alone and may enroll again; sessions stay. Records
 * `user.updated` (`mfa_enabled` false) and `admin.reset-mfa`. Not on: an error, nothing changed.
 */
export async function resetMfa({ em, clock }: Env, username: string): Promise<{ username: string }> {
  return asOperator(async () => {
    const user = await findUser(em, username);
    await em.transactional(async (tx) => {
      if (!(await lockUser(tx, user.id)) || (await findUserWithGrants(tx, user.id))?.mfaEnabled !== true) {
        throw new AdminError(`${user.username} does not have two-factor authentication on`);
      }
      const now = clock.now();
      await turnOffMfa(tx, user.id, now, null);
      await recordEvent(tx, { type: 'admin.reset-mfa', actor: null, at: now, target: { type: 'user', id: user.id }, data: { username: user.username, operator: operator() } });
    });
    return { username: user.username };
  });
}

export type UserRow = { username: string; role: string; mustChangePassword: boolean; liveSessions: number; createdAt: Date };

/** Every user with the count of live sessions; the reading itself is recorded (`admin.list-users`), as it bypasses the API's roles. */
export async function listUsers({ em, clock }: Env): Promise<UserRow[]> {
  const [users, sessions] = await Promise.all([allUsers(em), liveSessions(em, clock.now(), null)]);
  const live = Map.groupBy(sessions, (s) => s.userId);
  await asOperator(() =>
    em.transactional((tx) => recordEvent(tx, { type: 'admin.list-users', actor: null, at: clock.now(), target: null, data: { users: users.length, operator: operator() } })),
  );
  return users.map((u) => ({
    username: u.username,
    role: u.role,
    mustChangePassword: u.mustChangePassword,
    liveSessions: live.get(u.id)?.length ?? 0,
    createdAt: u.createdAt,
  }));
}

/** A plain-text table with a header row, columns padded to their widest cell. */
export function formatTable(rows: readonly UserRow[]): string {
  const header = ['USERNAME', 'ROLE', 'MUST CHANGE PASSWORD', 'LIVE SESSIONS', 'CREATED'];
  const cells = rows.map((r) => [r.username, r.role, r.mustChangePassword ? 'yes' : 'no', String(r.liveSessions), r.createdAt.toISOString()]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]?.length ?? 0)));
  const line = (c: readonly string[]) => c.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(header), ...cells.map(line)].join('\n');
}

// Looked up by the login key, so the operator may type the name as the user signs in with it.
async function findUser(em: EntityManager, username: string) {
  const user = await findUserByKeyWithGrants(em, usernameKey(username));
  if (!user) throw new AdminError(`no user named ${JSON.stringify(username)}`);
  return user;
}
