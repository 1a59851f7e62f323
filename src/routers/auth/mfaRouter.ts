// auth.mfa.{status, enroll, confirm, disable, regenerateRecoveryCodes}: the caller's own two-factor authentication (CONTRACT §3.6).
import type { Context } from '../../context/index.ts';
import type { Actor } from '../../contracts/actor.ts';
import * as mfa from '../../services/mfa/mfa.ts';
import { NoContent, noContent } from '../noContent.ts';
import { authedProcedure, router } from '../../trpc.ts';
import {
  ConfirmTotpRequest,
  DisableTotpRequest,
  MfaStatusResponse,
  RecoveryCodesResponse,
  RegenerateRecoveryCodesRequest,
  TotpEnrollmentResponse,
} from '../../contracts/mfa.ts';

const tags = ['auth'];
const WRONG_CODE = 'The code is not a current one of the authenticator app, or was used already (`invalid one-time code`).';
const THROTTLED = 'Too many wrong passwords or codes: they count toward the login throttle of this user and IP (10 within 15 minutes).';

/**
 * Every procedure here serves a user whose role requires two-factor authentication before it is on (they
 * are how it gets turned on), and none serves an API key (no `apiKey` meta: a key never changes an account).
 */
const ownMfaProcedure = authedProcedure.meta({ allowPendingMfaEnrollment: true });

const ownOf = (ctx: Context & { actor: Actor }) => ({ em: ctx.em, clock: ctx.deps.clock, secret: ctx.deps.secret, actor: ctx.actor });
const guessingOf = (ctx: Context) => ({ loginThrottle: ctx.deps.loginThrottle, ip: ctx.ip });

export const mfaRouter = router({
  status: ownMfaProcedure
    .meta({ openapi: { method: 'GET', path: '/auth/mfa', tags, summary: 'Whether two-factor authentication is on, recovery codes left, and whether the role requires it' } })
    .output(MfaStatusResponse)
    .query(({ ctx }) => mfa.status({ em: ctx.em, actor: ctx.actor }, ctx.deps.config.mfaRequiredRoles)),

  enroll: ownMfaProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/auth/mfa/totp/enroll',
        tags,
        summary: 'A new TOTP key to add to an authenticator app (no body); confirm it with a code',
        description: 'The key is shown in this answer only, as text and as an `otpauth://` URL for a QR code. A new enrollment replaces one not confirmed yet.',
      },
      errors: { 4000: 'Two-factor authentication is already on.' },
      limits: { op: 'auth.mfa_enroll' },
    })
    .output(TotpEnrollmentResponse)
    .mutation(({ ctx }) => mfa.enroll(ownOf(ctx))),

  confirm: ownMfaProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/auth/mfa/totp/confirm',
        tags,
        summary: 'Turn two-factor authentication on with a code of the enrolled key; answers the ten recovery codes, shown once',
      },
      errors: { 2000: WRONG_CODE, 4000: 'No enrollment is pending, or two-factor authentication is already on.' },
      limits: { op: 'auth.mfa_confirm' },
    })
    .input(ConfirmTotpRequest)
    .output(RecoveryCodesResponse)
    .mutation(({ ctx, input }) => mfa.confirm(ownOf(ctx), input)),

  disable: ownMfaProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/mfa/totp/disable', tags, summary: 'Turn two-factor authentication off with the password and a TOTP or recovery code' },
      rest: { status: 204 },
      errors: {
        2000: 'The password is wrong (`password is incorrect`), or the code is neither a current TOTP code nor an unused recovery code (`invalid one-time code`).',
        4000: 'Two-factor authentication is not on.',
        5001: THROTTLED,
      },
      limits: { op: 'auth.mfa_disable' },
    })
    .input(DisableTotpRequest)
    .output(NoContent)
    .mutation(({ ctx, input }) => noContent(mfa.disable({ ...ownOf(ctx), ...guessingOf(ctx) }, input))),

  regenerateRecoveryCodes: ownMfaProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/mfa/recovery-codes', tags, summary: 'Ten new recovery codes for a current TOTP code; the old ones stop working' },
      errors: { 2000: WRONG_CODE, 4000: 'Two-factor authentication is not on.', 5001: THROTTLED },
      limits: { op: 'auth.mfa_recovery_codes' },
    })
    .input(RegenerateRecoveryCodesRequest)
    .output(RecoveryCodesResponse)
    .mutation(({ ctx, input }) => mfa.regenerateRecoveryCodes({ ...ownOf(ctx), ...guessingOf(ctx) }, input)),
});
