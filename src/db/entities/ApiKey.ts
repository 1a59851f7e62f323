// API keys (CONTRACT §3.5): a user's machine credential, stored only as the SHA-256 of the secret.
import { defineEntity, p } from '@mikro-orm/core';
import type { Scope } from '../../contracts/apiKeys.ts';

export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.uuid().primary(),
    /** SHA-256 (hex) of the secret: what a request's key is looked up by. */
    secretHash: p.string().length(64).unique('api_keys_secret_hash_unique'),
    // No foreign key: a deleted user's keys must still answer 1002 rather than read as unknown.
    userId: p.uuid(),
    name: p.string().length(100),
    prefix: p.string().length(12),
    scopes: p.array<Scope>().columnType('text[]'),
    createdAt: p.datetime(3),
    /** Username of whoever issued it, copied so that it still reads after that account is deleted. */
    createdBy: p.string().length(128),
    expiresAt: p.datetime(3).nullable(),
    lastUsedAt: p.datetime(3).nullable(),
    revokedAt: p.datetime(3).nullable(),
  },
  indexes: [
    // Lists are newest first: everyone's (the CEO) or one user's, also counting that user's active keys.
    { name: 'api_keys_created_at_id_idx', expression: `create index "api_keys_created_at_id_idx" on "api_keys" ("created_at" desc, "id" desc)` },
    { name: 'api_keys_user_created_at_id_idx', expression: `create index "api_keys_user_created_at_id_idx" on "api_keys" ("user_id", "created_at" desc, "id" desc)` },
  ],
});
export class ApiKey extends ApiKeySchema.class {}
ApiKeySchema.setClass(ApiKey);
