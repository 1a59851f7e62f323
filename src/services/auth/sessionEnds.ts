// Ending sessions: every revocation goes through here, so each session it ends writes its one session.revoked event.
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent } from '../../events/record.ts';
import * as store from './store.ts';

export type { EndedSession, RevokeReason } from './store.ts';

/**
 * Who ends the sessions, as the events' `actor`: a username, null for the system or an operator outside
 * the API (a refresh-token replay, `npm run admin`), or `'owner'` for each session's own user (a logout,
 * a sign-in evicting the oldest session).
 */
export type EndedBy = { username: string | null } | 'owner';

/**
 * Records one `session.revoked` per ended session, for its own user only. `em` must be inside the
 * transaction that revoked them (recordEvent refuses otherwise): the events exist if and only if the
 * revocation commits.
 */
async function announce(em: EntityManager, ended: readonly store.EndedSession[], reason: store.RevokeReason, by: EndedBy, at: Date): Promise<void> {
  for (const session of ended) {
    await recordEvent(em, {
      type: 'session.revoked',
      actor: by === 'owner' ? session.username : by.username,
      audience: session.userId,
      at,
      data: { session_id: session.id, reason },
    });
  }
}

/** Revokes one session unless it already is (then nothing is recorded); returns it when it was live. Call inside a transaction. */
export async function endSession(em: EntityManager, sessionId: string, reason: store.RevokeReason, by: EndedBy, now: Date): Promise<store.EndedSession | undefined> {
  const ended = await store.revokeSession(em, sessionId, reason, now);
  if (ended) await announce(em, [ended], reason, by, now);
  return ended;
}

/** Revokes every live session of a user except `keepSessionId`; returns how many. Call inside a transaction. */
export async function endUserSessions(
  em: EntityManager,
  userId: string,
  reason: store.RevokeReason,
  by: EndedBy,
  now: Date,
  keepSessionId?: string,
): Promise<number> {
  const ended = await store.revokeUserSessions(em, userId, reason, now, keepSessionId);
  await announce(em, ended, reason, by, now);
  return ended.length;
}

/** Makes room under the per-user cap: revokes the live sessions beyond the newest `keep`. Call inside a transaction. */
export async function evictSessionsBeyond(em: EntityManager, userId: string, keep: number, now: Date): Promise<void> {
  await announce(em, await store.evictSessionsBeyond(em, userId, keep, now), 'evicted', 'owner', now);
}
