// TOTP keys of two-factor authentication (CONTRACT §3.6): one per user, pending until users.mfa_enabled says it is on.
import { defineEntity, p } from '@mikro-orm/core';

export const UserTotpSchema = defineEntity({
  name: 'UserTotp',
  tableName: 'user_totp',
  properties: {
    userId: p.uuid().primary(),
    /**
     * The key, sealed with AES-256-GCM under a key derived from the server secret (services/mfa/secretBox.ts):
     * a copy of the database alone does not give anyone the codes. Returned once, by the enrollment.
     */
    secret: p.text(),
    createdAt: p.datetime(3),
    /**
     * The last 30-second step whose code was accepted. Only a later step's code is accepted after it, so each
     * code works once (RFC 6238 §5.2), wherever it is presented; a compare-and-set decides between two at once.
     */
    lastUsedStep: p.integer().nullable(),
  },
});
export class UserTotp extends UserTotpSchema.class {}
UserTotpSchema.setClass(UserTotp);
