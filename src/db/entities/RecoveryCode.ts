// Recovery codes of two-factor authentication (CONTRACT §3.6): single use, stored only as SHA-256, deleted when used.
import { defineEntity, p } from '@mikro-orm/core';

export const RecoveryCodeSchema = defineEntity({
  name: 'RecoveryCode',
  tableName: 'mfa_recovery_codes',
  properties: {
    userId: p.uuid().primary(),
    /** SHA-256 (hex) of the code as normalised (services/mfa/recoveryCodes.ts). */
    codeHash: p.string().length(64).primary(),
    createdAt: p.datetime(3),
  },
});
export class RecoveryCode extends RecoveryCodeSchema.class {}
RecoveryCodeSchema.setClass(RecoveryCode);
