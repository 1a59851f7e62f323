// Refresh tokens by SHA-256: single use; a used one presented again marks a replay.
import { defineEntity, p } from '@mikro-orm/core';

export const RefreshTokenSchema = defineEntity({
  name: 'RefreshToken',
  tableName: 'refresh_tokens',
  properties: {
    tokenHash: p.string().length(64).primary(),
    sessionId: p.string().length(64).index('refresh_tokens_session_id_idx'),
    createdAt: p.datetime(3),
    expiresAt: p.datetime(3),
    usedAt: p.datetime(3).nullable(),
  },
});
export class RefreshToken extends RefreshTokenSchema.class {}
RefreshTokenSchema.setClass(RefreshToken);
