// The sessions, refresh_tokens and ws_tickets tables: the only module that reads or writes them.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ExpressionBuilder, Insertable } from 'kysely';
import { kysely, type DB, type Stored } from '../../db/kysely.ts';
import { prepared, type Placeholder } from '../../db/prepared.ts';
import { grantsOf } from '../users/store.ts';
import { isRole, type Role } from '../../contracts/roles.ts';
import { isScope, type Scope } from '../../contracts/apiKeys.ts';
import type { SessionEndReason } from '../../contracts/events.ts';

export type StoredSession = Stored<'sessions'>;

/**
 * Why a session was revoked, stored in `revoked_reason` under the same names `session.revoked` events
 * publish (CONTRACT §4.8), so nothing translates between the two. Rows written before the rename were
 * migrated (Migration20261123222724_session_end_reasons).
 */
export type RevokeReason = SessionEndReason;

/** A session a revocation ended: whom its event goes to, and the owner's name (null once the user is deleted). */
export type EndedSession = { id: string; userId: string; username: string | null };

/**
 * The hot path, run by every authenticated request: one indexed query (token hash → session → user, a left
 * join, so a deleted user's revoked session still answers), with the user's org roles as one JSON subquery
 * on their primary key, so an authenticated request needs no second query. It runs prepared
 * (db/prepared.ts): planning it on every request cost PostgreSQL more than running it
 * (docs/foundation.md#measured-reasons-behind-the-code).
 */
const sessionByTokenHash = prepared('session_lookup', (db, $: Placeholder<{ tokenHash: string }>) =>
  db
    .selectFrom('sessions as s')
    .leftJoin('users as u', 'u.id', 's.userId')
    .select(['s.id', 's.userId', 's.expiresAt', 's.lastActiveAt', 's.revokedAt', 'u.username', 'u.role', 'u.mustChangePassword', 'u.mfaEnabled'])
    .select((eb) => grantsOf(eb.ref('s.userId')).as('grants'))
    .where('s.tokenHash', '=', $('tokenHash')),
);

export type SessionLookup = Awaited<ReturnType<typeof sessionByTokenHash>>[number];

export async function findSessionByTokenHash(em: EntityManager, tokenHash: string): Promise<SessionLookup | undefined> {
  return (await sessionByTokenHash(em, { tokenHash }))[0];
}

/**
 * A new session and its first refresh token, in one statement: a sign-in's round trips are most of its cost
 * besides argon2 (bench/RESULTS.md). The token's foreign key is checked at the end of the statement, by
 * when the session's row is there.
 */
export async function insertSession(em: EntityManager, session: NewSession, refreshToken: { tokenHash: string }): Promise<void> {
  await kysely(em)
    .with('session', (db) => db.insertInto('sessions').values(session))
    .insertInto('refresh_tokens')
    .values({ tokenHash: refreshToken.tokenHash, sessionId: session.id, createdAt: session.createdAt, expiresAt: session.refreshExpiresAt })
    .execute();
}

type NewSession = Omit<StoredSession, 'revokedAt' | 'revokedReason'>;

export async function touchSession(em: EntityManager, id: string, now: Date): Promise<void> {
  await kysely(em).updateTable('sessions').set({ lastActiveAt: now }).where('id', '=', id).execute();
}

/** The owner's name beside each revoked session: a subquery, as a deleted user's sessions must still be revoked (no row to join). */
const ownerName = (eb: ExpressionBuilder<DB, 'sessions'>) =>
  eb.selectFrom('users').select('users.username').whereRef('users.id', '=', 'sessions.userId').as('username');

/** Revokes the user's live sessions beyond the newest `keep` (the per-user cap makes room for one more); returns them. */
export async function evictSessionsBeyond(em: EntityManager, userId: string, keep: number, now: Date): Promise<EndedSession[]> {
  return kysely(em)
    .updateTable('sessions')
    .set({ revokedAt: now, revokedReason: 'evicted' })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('sessions')
        .select('id')
        .where('userId', '=', userId)
        .where('revokedAt', 'is', null)
        .where('refreshExpiresAt', '>', now)
        .orderBy('createdAt', 'desc')
        .orderBy('id', 'desc')
        .offset(keep),
    )
    .returning(['sessions.id', 'sessions.userId', ownerName])
    .execute();
}

/** Revokes one session unless it already is; returns it when it was live. */
export async function revokeSession(em: EntityManager, id: string, reason: RevokeReason, now: Date): Promise<EndedSession | undefined> {
  return kysely(em)
    .updateTable('sessions')
    .set({ revokedAt: now, revokedReason: reason })
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .returning(['sessions.id', 'sessions.userId', ownerName])
    .executeTakeFirst();
}

/** Revokes every unrevoked session of a user, optionally keeping one; returns those it revoked, in id order. */
export async function revokeUserSessions(em: EntityManager, userId: string, reason: RevokeReason, now: Date, keepSessionId?: string): Promise<EndedSession[]> {
  let query = kysely(em).updateTable('sessions').set({ revokedAt: now, revokedReason: reason }).where('userId', '=', userId).where('revokedAt', 'is', null);
  if (keepSessionId !== undefined) query = query.where('id', '<>', keepSessionId);
  const ended = await query.returning(['sessions.id', 'sessions.userId', ownerName]).execute();
  // UPDATE … RETURNING has no order; the events follow a stable one.
  return ended.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The session whose current access token has this hash, in whatever state (expired, revoked). */
export async function findSessionIdByTokenHash(em: EntityManager, tokenHash: string): Promise<string | undefined> {
  const row = await kysely(em).selectFrom('sessions').select('id').where('tokenHash', '=', tokenHash).executeTakeFirst();
  return row?.id;
}

/** The session a refresh token was issued to, whether the token is used or expired. */
export async function findSessionIdByRefreshTokenHash(em: EntityManager, tokenHash: string): Promise<string | undefined> {
  const row = await kysely(em).selectFrom('refresh_tokens').select('sessionId').where('tokenHash', '=', tokenHash).executeTakeFirst();
  return row?.sessionId;
}

/** Locks a session row for a token change until the transaction ends. */
export async function lockSession(em: EntityManager, id: string) {
  return kysely(em).selectFrom('sessions').select(['id', 'userId', 'revokedAt', 'absoluteExpiresAt']).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Replaces the session's access token (its hash) and lifetimes after a rotation. */
export async function setSessionToken(
  em: EntityManager,
  id: string,
  token: { tokenHash: string; expiresAt: Date; refreshExpiresAt: Date; lastActiveAt: Date },
): Promise<void> {
  await kysely(em).updateTable('sessions').set(token).where('id', '=', id).execute();
}

/** Live sessions (not revoked, still refreshable) with their user's name, newest first; all users' when `userId` is null. */
export async function liveSessions(em: EntityManager, now: Date, userId: string | null) {
  let query = kysely(em)
    .selectFrom('sessions as s')
    .leftJoin('users as u', 'u.id', 's.userId')
    .select(['s.id', 's.userId', 'u.username', 's.ipAddress', 's.userAgent', 's.createdAt', 's.lastActiveAt', 's.expiresAt'])
    .where('s.revokedAt', 'is', null)
    .where('s.refreshExpiresAt', '>', now);
  if (userId !== null) query = query.where('s.userId', '=', userId);
  return query.orderBy('s.createdAt', 'desc').orderBy('s.id', 'desc').execute();
}

export type LiveSession = Awaited<ReturnType<typeof liveSessions>>[number];

/** The owner of a live session, if the session is live. */
export async function findLiveSessionOwner(em: EntityManager, id: string, now: Date): Promise<string | undefined> {
  const row = await kysely(em)
    .selectFrom('sessions')
    .select('userId')
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .where('refreshExpiresAt', '>', now)
    .executeTakeFirst();
  return row?.userId;
}

/** Unrevoked sessions of a user (lucia's getUserSessions). */
export async function unrevokedSessionsOf(em: EntityManager, userId: string) {
  return kysely(em).selectFrom('sessions').select(['id', 'expiresAt', 'lastActiveAt']).where('userId', '=', userId).where('revokedAt', 'is', null).execute();
}

export async function deleteSessionsEndedBefore(em: EntityManager, now: Date): Promise<void> {
  await kysely(em).deleteFrom('sessions').where('absoluteExpiresAt', '<', now).execute();
}

export async function insertRefreshToken(em: EntityManager, token: Insertable<DB['refresh_tokens']>): Promise<void> {
  await kysely(em).insertInto('refresh_tokens').values(token).execute();
}

export async function lockRefreshToken(em: EntityManager, tokenHash: string) {
  return kysely(em).selectFrom('refresh_tokens').select(['sessionId', 'expiresAt', 'usedAt']).where('tokenHash', '=', tokenHash).forUpdate().executeTakeFirst();
}

export async function markRefreshTokenUsed(em: EntityManager, tokenHash: string, now: Date): Promise<void> {
  await kysely(em).updateTable('refresh_tokens').set({ usedAt: now }).where('tokenHash', '=', tokenHash).execute();
}

/** Drops a session's unused refresh tokens (a used one must stay to be recognised as a replay). */
export async function deleteUnusedRefreshTokens(em: EntityManager, sessionId: string): Promise<void> {
  await kysely(em).deleteFrom('refresh_tokens').where('sessionId', '=', sessionId).where('usedAt', 'is', null).execute();
}

export async function countPendingTickets(em: EntityManager, userId: string, now: Date): Promise<number> {
  const row = await kysely(em)
    .selectFrom('ws_tickets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('userId', '=', userId)
    .where('redeemedAt', 'is', null)
    .where('expiresAt', '>', now)
    .executeTakeFirstOrThrow();
  return row.n;
}

export async function deleteExpiredTickets(em: EntityManager, userId: string, now: Date): Promise<void> {
  await kysely(em).deleteFrom('ws_tickets').where('userId', '=', userId).where('expiresAt', '<=', now).execute();
}

export async function insertTicket(em: EntityManager, ticket: Insertable<DB['ws_tickets']>): Promise<void> {
  await kysely(em).insertInto('ws_tickets').values(ticket).execute();
}

/**
 * Who a redeemed ticket lets in: what it was issued to (the session, or else the API key with its scopes,
 * CONTRACT §3.5) and that user's current authorization.
 */
export type TicketHolder = {
  userId: string;
  sessionId: string | null;
  apiKey: { id: string; scopes: Scope[] } | null;
  username: string;
  role: Role;
  mustChangePassword: boolean;
};

/** What the ticket was issued to still works: its session is not revoked, or its API key neither revoked nor expired. */
function holderLive(eb: ExpressionBuilder<DB, 'ws_tickets'>, now: Date) {
  return eb.or([
    eb.exists(eb.selectFrom('sessions').select('sessions.id').whereRef('sessions.id', '=', 'ws_tickets.sessionId').where('sessions.revokedAt', 'is', null)),
    eb.exists(
      eb
        .selectFrom('api_keys')
        .select('api_keys.id')
        .whereRef('api_keys.id', '=', 'ws_tickets.apiKeyId')
        .where('api_keys.revokedAt', 'is', null)
        .where((k) => k.or([k('api_keys.expiresAt', 'is', null), k('api_keys.expiresAt', '>', now)])),
    ),
  ]);
}

/**
 * Redeems a WebSocket ticket exactly once, on any instance: one conditional UPDATE, so of concurrent
 * redemptions exactly one gets the row. Null when unknown, expired, used, or its session or key has ended.
 */
export async function redeemTicket(em: EntityManager, ticketHash: string, now: Date): Promise<TicketHolder | null> {
  const row = await kysely(em)
    .updateTable('ws_tickets')
    .from('users')
    .set({ redeemedAt: now })
    .where('ws_tickets.ticketHash', '=', ticketHash)
    .where('ws_tickets.redeemedAt', 'is', null)
    .where('ws_tickets.expiresAt', '>', now)
    .whereRef('users.id', '=', 'ws_tickets.userId')
    .where((eb) => holderLive(eb, now))
    .returning(['ws_tickets.userId', 'ws_tickets.sessionId', 'ws_tickets.apiKeyId', 'users.username', 'users.role', 'users.mustChangePassword'])
    .returning((eb) => eb.selectFrom('api_keys').select('api_keys.scopes').whereRef('api_keys.id', '=', 'ws_tickets.apiKeyId').as('apiKeyScopes'))
    .executeTakeFirst();
  if (!row || !isRole(row.role)) return null;
  const apiKey = row.apiKeyId !== null ? { id: row.apiKeyId, scopes: (row.apiKeyScopes ?? []).filter(isScope) } : null;
  return { userId: row.userId, sessionId: row.sessionId, apiKey, username: row.username, role: row.role, mustChangePassword: row.mustChangePassword };
}

/** The same conditions as redeemTicket without using the ticket (for a request that is not an upgrade). */
export async function ticketIsRedeemable(em: EntityManager, ticketHash: string, now: Date): Promise<boolean> {
  const row = await kysely(em)
    .selectFrom('ws_tickets')
    .select('ws_tickets.ticketHash')
    .where('ws_tickets.ticketHash', '=', ticketHash)
    .where('ws_tickets.redeemedAt', 'is', null)
    .where('ws_tickets.expiresAt', '>', now)
    .where((eb) => holderLive(eb, now))
    .executeTakeFirst();
  return row !== undefined;
}

// Housekeeping (src/services/housekeeping): each call deletes at most `limit` rows, so every statement stays
// short next to requests; the caller repeats until fewer come back.

/**
 * Sessions nothing can use any more: the access token and the refresh window have both ended. A revoked
 * session is kept until then, so its tokens still answer 1002 rather than 1000.
 */
export async function purgeEndedSessions(em: EntityManager, now: Date, limit: number): Promise<number> {
  const result = await kysely(em)
    .deleteFrom('sessions')
    .where('id', 'in', (eb) => eb.selectFrom('sessions').select('id').where('expiresAt', '<=', now).where('refreshExpiresAt', '<=', now).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Refresh tokens past their expiry (used or not), and those whose session is gone. A used token stays
 * until it expires, so presenting it again is still recognised as a replay.
 */
export async function purgeRefreshTokens(em: EntityManager, now: Date, limit: number): Promise<number> {
  const result = await kysely(em)
    .deleteFrom('refresh_tokens')
    .where('tokenHash', 'in', (eb) =>
      eb
        .selectFrom('refresh_tokens as t')
        .select('t.tokenHash')
        .where((w) => w.or([w('t.expiresAt', '<=', now), w.not(w.exists(w.selectFrom('sessions as s').select('s.id').whereRef('s.id', '=', 't.sessionId')))]))
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** WebSocket tickets redeemed or expired: neither can be redeemed again. */
export async function purgeWsTickets(em: EntityManager, now: Date, limit: number): Promise<number> {
  const result = await kysely(em)
    .deleteFrom('ws_tickets')
    .where('ticketHash', 'in', (eb) =>
      eb
        .selectFrom('ws_tickets')
        .select('ticketHash')
        .where((w) => w.or([w('expiresAt', '<=', now), w('redeemedAt', 'is not', null)]))
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
