// lucia v3's database adapter over the auth store: lucia's "session id" is the access token, stored only as SHA-256.
import type { Adapter, DatabaseSession, DatabaseUser, Lucia } from 'lucia';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Role } from '../../contracts/roles.ts';
import { endUserSessions } from './sessionEnds.ts';
import * as store from './store.ts';
import { sha256 } from './tokens.ts';
import type { Clock } from '../../contracts/clock.ts';
import type { Grant } from '../../contracts/roles.ts';

export type SessionAttributes = {
  publicId: string;
  lastActiveAt: Date;
  ipAddress?: string | null;
  userAgent?: string | null;
  refreshExpiresAt?: Date;
  absoluteExpiresAt?: Date;
  /** The hash of the session's first refresh token, written with it (setSession only). */
  refreshTokenHash?: string;
};

export type UserAttributes = { username: string; role: Role; mustChangePassword: boolean; mfaEnabled: boolean; grants: Grant[] };

declare module 'lucia' {
  interface Register {
    Lucia: Lucia<SessionAttributes, UserAttributes>;
    DatabaseSessionAttributes: SessionAttributes;
    DatabaseUserAttributes: UserAttributes;
  }
}

/**
 * Revocation is a flag, not a delete: a revoked token must keep answering 1002 until it would have expired.
 * The last session looked up is kept so the caller can tell "revoked" from "unknown" without a second query.
 * Every statement runs on the given EntityManager, so inside its transaction when it has one.
 */
export class MikroOrmSessionAdapter implements Adapter {
  lastLookup: store.SessionLookup | null = null;
  private readonly em: EntityManager;
  private readonly clock: Clock;

  constructor(em: EntityManager, clock: Clock) {
    this.em = em;
    this.clock = clock;
  }

  async getSessionAndUser(token: string): Promise<[DatabaseSession | null, DatabaseUser | null]> {
    const row = (await store.findSessionByTokenHash(this.em, sha256(token))) ?? null;
    this.lastLookup = row;
    if (!row || row.revokedAt !== null) return [null, null];
    // Expired by the service's clock, which tests move; lucia's own check reads the wall clock.
    if (row.expiresAt.getTime() <= this.clock.now().getTime()) return [null, null];
    const session: DatabaseSession = {
      id: token,
      userId: row.userId,
      expiresAt: row.expiresAt,
      attributes: { publicId: row.id, lastActiveAt: row.lastActiveAt },
    };
    if (row.username === null || row.role === null || row.mustChangePassword === null || row.mfaEnabled === null) return [session, null];
    const attributes = { username: row.username, role: row.role, mustChangePassword: row.mustChangePassword, mfaEnabled: row.mfaEnabled, grants: row.grants };
    return [session, { id: row.userId, attributes }];
  }

  async getUserSessions(userId: string): Promise<DatabaseSession[]> {
    const rows = await store.unrevokedSessionsOf(this.em, userId);
    // lucia keys sessions by token, which we never store; the public id stands in for listing.
    return rows.map((r) => ({ id: r.id, userId, expiresAt: r.expiresAt, attributes: { publicId: r.id, lastActiveAt: r.lastActiveAt } }));
  }

  async setSession(session: DatabaseSession): Promise<void> {
    const a = session.attributes;
    if (a.refreshTokenHash === undefined) throw new Error('a session is created with its first refresh token (issueSession)');
    await store.insertSession(
      this.em,
      {
        id: a.publicId,
        tokenHash: sha256(session.id),
        userId: session.userId,
        ipAddress: a.ipAddress ?? null,
        userAgent: a.userAgent ?? null,
        createdAt: a.lastActiveAt,
        lastActiveAt: a.lastActiveAt,
        expiresAt: session.expiresAt,
        refreshExpiresAt: a.refreshExpiresAt ?? session.expiresAt,
        absoluteExpiresAt: a.absoluteExpiresAt ?? session.expiresAt,
      },
      { tokenHash: a.refreshTokenHash },
    );
  }

  // lucia's active-period extension: it calls this for a token used in the second half of its life. An access
  // token's lifetime is fixed when it is issued (CONTRACT §3.7): a stolen token used now and then must not live
  // on for days without its refresh token. Only a refresh issues a later expiry, with a new token.
  async updateSessionExpiration(): Promise<void> {}

  // lucia calls this when an access token has expired (or its user is gone). Expiry is not revocation: the
  // session's refresh token may still renew it, so nothing is written. Logout revokes through sessions.ts.
  async deleteSession(): Promise<void> {}

  // lucia's invalidateUserSessions (not called by this service): a revocation like any other, with its events.
  async deleteUserSessions(userId: string): Promise<void> {
    await this.em.transactional((tx) => endUserSessions(tx, userId, 'revoked', { username: null }, this.clock.now()));
  }

  async deleteExpiredSessions(): Promise<void> {
    await store.deleteSessionsEndedBefore(this.em, this.clock.now());
  }
}
