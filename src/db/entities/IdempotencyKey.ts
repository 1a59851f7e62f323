// Idempotency keys (CONTRACT §2.5): a create's first result, kept 24 h so a retry gets it again.
import { defineEntity, p } from '@mikro-orm/core';

export const IdempotencyKeySchema = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    userId: p.uuid().primary(),
    key: p.string().length(255).primary(),
    /** The procedure the key was first used with, e.g. `users.create`. */
    operation: p.string().length(64),
    /** SHA-256 of the operation and its canonical input: the same key with another body is a conflict. */
    fingerprint: p.string().length(64),
    /** The procedure's output once it succeeded; null while the first request is in flight. */
    response: p.json<unknown>().columnType('jsonb').nullable(),
    createdAt: p.datetime(3),
    /** While the first request runs; a claim whose process died is taken over after this. */
    leaseUntil: p.datetime(3),
    expiresAt: p.datetime(3).index('idempotency_keys_expires_at_idx'),
  },
});
export class IdempotencyKey extends IdempotencyKeySchema.class {}
IdempotencyKeySchema.setClass(IdempotencyKey);
