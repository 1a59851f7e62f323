// Recovery codes (CONTRACT §3.6): ten random codes shown once, kept only as SHA-256; and how a typed code is read.
import { randomBytes } from 'node:crypto';
import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding';
import { RECOVERY_CODE_COUNT } from '../../contracts/mfa.ts';
import { sha256 } from '../auth/tokens.ts';

/**
 * 80 random bits a code, 16 base32 characters. A fast hash is enough at rest, as for API keys (§3.5): a
 * password is guessed from a short list, but nobody can run through 2^80 candidates, however fast each one
 * is; and the codes are looked up by their hash, which a slow salted hash would not allow.
 */
const CODE_BYTES = 10;
const GROUP = 4;

/** What a code is once spaces and hyphens are dropped and letters lowered: 16 characters of the base32 alphabet. */
const RECOVERY_CODE = /^[a-z2-7]{16}$/;
const TOTP_CODE = /^\d{6}$/;

/** Ten new codes as shown to the user (`abcd-efgh-ijkl-mnop`). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const code = encodeBase32LowerCaseNoPadding(randomBytes(CODE_BYTES));
    return code.match(new RegExp(`.{${GROUP}}`, 'g'))?.join('-') ?? code;
  });
}

/** The hash a code is stored and looked up by, from the code as shown or as typed. */
export function recoveryCodeHash(code: string): string {
  return sha256(normalise(code));
}

/** What a typed one-time code is: a TOTP code, a recovery code, or neither (then it is simply wrong). */
export type TypedCode = { kind: 'totp'; code: string } | { kind: 'recovery'; hash: string } | { kind: 'invalid' };

/** Spaces and hyphens are ignored (apps show `123 456`, codes are printed in groups); letters in any case. */
export function readCode(typed: string): TypedCode {
  const code = normalise(typed);
  if (TOTP_CODE.test(code)) return { kind: 'totp', code };
  if (RECOVERY_CODE.test(code)) return { kind: 'recovery', hash: sha256(code) };
  return { kind: 'invalid' };
}

function normalise(code: string): string {
  return code.replace(/[\s-]/g, '').toLowerCase();
}
