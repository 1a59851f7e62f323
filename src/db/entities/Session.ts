// Sessions: a stable public id, the SHA-256 of the current access token, lifetimes and revocation.
import { defineEntity, p } from '@mikro-orm/core';

export const SessionSchema = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    id: p.string().primary().length(64),
    /** SHA-256 (hex) of the current access token; replaced on every rotation. */
    tokenHash: p.string().length(64).unique('sessions_token_hash_unique'),
    // No foreign key: a deleted user's sessions must still answer 1002 until they expire.
    userId: p.uuid().index('sessions_user_id_idx'),
    ipAddress: p.string().length(64).nullable(),
    userAgent: p.string().length(512).nullable(),
    createdAt: p.datetime(3),
    lastActiveAt: p.datetime(3),
    expiresAt: p.datetime(3),
    refreshExpiresAt: p.datetime(3),
    absoluteExpiresAt: p.datetime(3),
    revokedAt: p.datetime(3).nullable(),
    revokedReason: p.string().length(32).nullable(),
  },
  indexes: [
    // A user's live sessions, newest first: eviction under the cap, the sessions list and revoking them all
    // read only these, however many revoked ones the user has left behind (they stay until they expire).
    {
      name: 'sessions_live_by_user_idx',
      expression: `create index "sessions_live_by_user_idx" on "sessions" ("user_id", "created_at" desc, "id" desc) where "revoked_at" is null`,
    },
  ],
});
export class Session extends SessionSchema.class {}
SessionSchema.setClass(Session);
