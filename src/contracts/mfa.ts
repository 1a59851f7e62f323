// Schemas of two-factor authentication (CONTRACT §3.6): TOTP enrollment, recovery codes, the status and the CEO's reset.
import { z } from 'zod';

/** RFC 6238 as every authenticator app reads it: HMAC-SHA-1, 6 digits, 30-second steps. */
export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_S = 30;
/** The issuer an authenticator app shows beside the account name. */
export const TOTP_ISSUER = 'agent-org';
/** Recovery codes issued at once, each usable once. */
export const RECOVERY_CODE_COUNT = 10;
/** The longest code accepted as input; anything longer can be no code of ours and is refused as a shape error. */
export const MAX_ONE_TIME_CODE_LENGTH = 64;

/**
 * A one-time code as typed: any text up to 64 characters, so that a code of the wrong length or with letters
 * is a wrong code (400/2000 or, at login, 401/1000 `invalid one-time code`) like any other, not a shape error.
 */
export const OneTimeCode = z
  .string()
  .min(1)
  .max(MAX_ONE_TIME_CODE_LENGTH)
  .describe('The 6-digit code of the authenticator app, or where accepted a recovery code (`xxxx-xxxx-xxxx-xxxx`); spaces and hyphens are ignored.');

export const MfaStatusResponse = z
  .object({
    totp_enabled: z.boolean().describe('Two-factor authentication (TOTP) is on: signing in needs a one-time code.'),
    recovery_codes_remaining: z.int().min(0).max(RECOVERY_CODE_COUNT).describe('Unused recovery codes left (0 while TOTP is off).'),
    required: z.boolean().describe("The user's role is in MFA_REQUIRED_ROLES: without TOTP on, every operation but these two-factor ones, `GET /auth/me`, logout and password change answers 403/1001."),
  })
  .meta({ id: 'MfaStatusResponse' });
export type MfaStatusResponse = z.infer<typeof MfaStatusResponse>;

export const TotpEnrollmentResponse = z
  .object({
    secret: z.string().describe('The TOTP key, base32 without padding (160 random bits), for manual entry; shown in this response only.'),
    otpauth_url: z
      .string()
      .describe('`otpauth://totp/agent-org:<username>?secret=<secret>&issuer=agent-org&algorithm=SHA1&digits=6&period=30` (the username percent-encoded), for a QR code.'),
  })
  .meta({ id: 'TotpEnrollmentResponse' });
export type TotpEnrollmentResponse = z.infer<typeof TotpEnrollmentResponse>;

export const RecoveryCodesResponse = z
  .object({
    recovery_codes: z
      .array(z.string())
      .length(RECOVERY_CODE_COUNT)
      .describe('Ten single-use codes (`xxxx-xxxx-xxxx-xxxx`), each one accepted once in place of a TOTP code at login or to turn TOTP off; shown in this response only.'),
  })
  .meta({ id: 'RecoveryCodesResponse' });
export type RecoveryCodesResponse = z.infer<typeof RecoveryCodesResponse>;

export const ConfirmTotpRequest = z.strictObject({ code: OneTimeCode.describe('A current code from the authenticator app.') }).meta({ id: 'ConfirmTotpRequest' });
export type ConfirmTotpRequest = z.infer<typeof ConfirmTotpRequest>;

export const DisableTotpRequest = z
  .strictObject({
    // Any length, as at login: a wrong short password is a wrong password (400/2000), not a shape error.
    password: z.string().min(1).max(1024).describe("The user's current password."),
    code: OneTimeCode.describe('A current code from the authenticator app, or an unused recovery code.'),
  })
  .meta({ id: 'DisableTotpRequest' });
export type DisableTotpRequest = z.infer<typeof DisableTotpRequest>;

export const RegenerateRecoveryCodesRequest = z
  .strictObject({ code: OneTimeCode.describe('A current code from the authenticator app (not a recovery code).') })
  .meta({ id: 'RegenerateRecoveryCodesRequest' });
export type RegenerateRecoveryCodesRequest = z.infer<typeof RegenerateRecoveryCodesRequest>;

export const ResetMfaInput = z.strictObject({ user_id: z.string().min(1).max(128).describe('Id of the user.') });
export type ResetMfaInput = z.infer<typeof ResetMfaInput>;
