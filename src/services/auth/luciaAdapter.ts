// lucia v3's database adapter over our sessions table: lucia's "session id" is the access token, stored only as SHA-256.
import type { Adapter, DatabaseSession, DatabaseUser, Lucia } from 'lucia';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlRows, sqlRun } from '../../db/sql.ts';
import { sha256 } from './tokens.ts';

export type SessionRow = {
  id: string;
  user_id: string;
  expires_at: Date;
  last_active_at: Date;
  revoked_at: Date | null;
  username: string | null;
  role: string | null;
  must_change_password: boolean | null;
  /** The user's org roles with their departments, as one JSON array (one cheap subquery). */
  org_roles: { role: string; departments: string[] }[];
};

export type SessionAttributes = {
  public_id: string;
  last_active_at: Date;
  ip_address?: string | null;
  user_agent?: string | null;
  refresh_expires_at?: Date;
  absolute_expires_at?: Date;
};

export type UserAttributes = { username: string; role: string; must_change_password: boolean; org_roles: string[]; scoped_departments: string[] };

declare module 'lucia' {
  interface Register {
    Lucia: Lucia<SessionAttributes, UserAttributes>;
    DatabaseSessionAttributes: SessionAttributes;
    DatabaseUserAttributes: UserAttributes;
  }
}

/**
 * Revocation is a flag, not a delete: a revoked token must keep answering 1002 until it would have expired.
 * The last row looked up is kept so the caller can tell "revoked" from "unknown" without a second query.
 * Every statement runs on the given EntityManager, so inside its transaction when it has one.
 */
export class MikroOrmSessionAdapter implements Adapter {
  lastLookup: SessionRow | null = null;
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async getSessionAndUser(token: string): Promise<[DatabaseSession | null, DatabaseUser | null]> {
    // The hot path: one indexed query (token hash → session → user).
    const rows = await sqlRows<SessionRow>(
      this.em,
      // Org roles ride along (primary-key lookups), so an authenticated request needs no second query.
      `select s.id, s.user_id, s.expires_at, s.last_active_at, s.revoked_at, u.username, u.role, u.must_change_password,
              (select coalesce(json_agg(json_build_object('role', r.role, 'departments', r.scoped_departments) order by r.role), '[]')
                 from user_org_roles r where r.user_id = s.user_id) as org_roles
         from sessions s left join users u on u.id = s.user_id
        where s.token_hash = ?`,
      [sha256(token)],
    );
    const row = rows[0] ?? null;
    this.lastLookup = row;
    if (!row || row.revoked_at !== null) return [null, null];
    const session: DatabaseSession = {
      id: token,
      userId: row.user_id,
      expiresAt: new Date(row.expires_at),
      attributes: { public_id: row.id, last_active_at: new Date(row.last_active_at) },
    };
    if (row.username === null || row.role === null || row.must_change_password === null) return [session, null];
    return [
      session,
      {
        id: row.user_id,
        attributes: {
          username: row.username,
          role: row.role,
          must_change_password: row.must_change_password,
          org_roles: row.org_roles.map((r) => r.role),
          scoped_departments: [...new Set(row.org_roles.flatMap((r) => r.departments))].sort(),
        },
      },
    ];
  }

  async getUserSessions(userId: string): Promise<DatabaseSession[]> {
    const rows = await sqlRows<{ id: string; expires_at: Date; last_active_at: Date }>(
      this.em,
      'select id, expires_at, last_active_at from sessions where user_id = ? and revoked_at is null',
      [userId],
    );
    // lucia keys sessions by token, which we never store; the public id stands in for listing.
    return rows.map((r) => ({ id: r.id, userId, expiresAt: new Date(r.expires_at), attributes: { public_id: r.id, last_active_at: new Date(r.last_active_at) } }));
  }

  async setSession(session: DatabaseSession): Promise<void> {
    const a = session.attributes;
    await sqlRun(
      this.em,
      `insert into sessions (id, token_hash, user_id, ip_address, user_agent, created_at, last_active_at, expires_at, refresh_expires_at, absolute_expires_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        a.public_id,
        sha256(session.id),
        session.userId,
        a.ip_address ?? null,
        a.user_agent ?? null,
        a.last_active_at,
        a.last_active_at,
        session.expiresAt,
        a.refresh_expires_at ?? session.expiresAt,
        a.absolute_expires_at ?? session.expiresAt,
      ],
    );
  }

  async updateSessionExpiration(token: string, expiresAt: Date): Promise<void> {
    // lucia's active-period extension, capped by the absolute lifetime and by the refresh window: a token that
    // outlived its refresh window would belong to a session no longer listed or revocable as live.
    await sqlRun(this.em, 'update sessions set expires_at = least(?, absolute_expires_at, refresh_expires_at) where token_hash = ? and revoked_at is null', [
      expiresAt,
      sha256(token),
    ]);
  }

  // lucia calls this when an access token has expired (or its user is gone). Expiry is not revocation: the
  // session's refresh token may still renew it, so nothing is written. Logout revokes through SessionService.
  async deleteSession(): Promise<void> {}

  async deleteUserSessions(userId: string): Promise<void> {
    await sqlRun(this.em, `update sessions set revoked_at = now(), revoked_reason = 'revoked' where user_id = ? and revoked_at is null`, [userId]);
  }

  async deleteExpiredSessions(): Promise<void> {
    await sqlRun(this.em, 'delete from sessions where absolute_expires_at < now()');
  }
}
