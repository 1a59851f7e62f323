// TOTP of RFC 6238 on @oslojs/otp (HMAC-SHA-1, 6 digits, 30 s): new keys, the otpauth URL, and the step a code belongs to.
import { randomBytes } from 'node:crypto';
import { encodeBase32UpperCaseNoPadding } from '@oslojs/encoding';
import { verifyHOTP } from '@oslojs/otp';
import { TOTP_DIGITS, TOTP_ISSUER, TOTP_PERIOD_S } from '../../contracts/mfa.ts';

/** 160 bits, the key length RFC 4226 §4 recommends (that of an HMAC-SHA-1 output). */
const KEY_BYTES = 20;

/**
 * The steps a code may come from: the previous, the current and the next (CONTRACT §3.6), for a phone whose
 * clock is a little off or a code typed as it changed. A code of the step before the previous one is refused.
 */
const ACCEPTED_DRIFT = [-1, 0, 1] as const;

export function newTotpKey(): Uint8Array {
  return new Uint8Array(randomBytes(KEY_BYTES));
}

/** The key as authenticator apps take it for manual entry: base32, upper case, no padding (20 bytes are 32 characters). */
export function base32Key(key: Uint8Array): string {
  return encodeBase32UpperCaseNoPadding(key);
}

/**
 * The URL a QR code carries (Google Authenticator's Key Uri Format), written out rather than taken from
 * @oslojs/otp's createTOTPKeyURI, whose parameter order differs from the one CONTRACT §3.6 fixes.
 */
export function otpauthUrl(username: string, key: Uint8Array): string {
  const label = `${TOTP_ISSUER}:${encodeURIComponent(username)}`;
  return `otpauth://totp/${label}?secret=${base32Key(key)}&issuer=${TOTP_ISSUER}&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_PERIOD_S}`;
}

/** The 30-second step `at` falls in (RFC 6238's T, counted from the Unix epoch). */
export function stepAt(at: Date): number {
  return Math.floor(at.getTime() / 1000 / TOTP_PERIOD_S);
}

/**
 * The step whose code `code` is (six digits, already normalised), among those accepted around `now`; null when
 * it is none of them. Counted with the service's clock rather than @oslojs/otp's verifyTOTP, which reads the
 * wall clock, and because the step is what a replay is refused by. Every candidate is compared (in constant
 * time, by verifyHOTP), so the time taken does not tell which step matched.
 */
export function matchingStep(key: Uint8Array, code: string, now: Date): number | null {
  const current = stepAt(now);
  let matched: number | null = null;
  for (const drift of ACCEPTED_DRIFT) {
    const step = current + drift;
    if (verifyHOTP(key, BigInt(step), TOTP_DIGITS, code) && matched === null) matched = step;
  }
  return matched;
}
