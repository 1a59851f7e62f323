// Password policy and hashing: argon2id with PHC strings, rehash when parameters change (CONTRACT §3.4).
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { ApiError } from '../../errors.ts';
import { isCommonPassword } from './commonPasswords.ts';

// OWASP's argon2id baseline: 19 MiB, 2 iterations, 1 lane.
// Algorithm is an ambient const enum (not importable under verbatimModuleSyntax); 2 is Argon2id.
const ARGON2ID: Algorithm = 2;
const PARAMS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
const PARAM_TAG = `$argon2id$v=19$m=${PARAMS.memoryCost},t=${PARAMS.timeCost},p=${PARAMS.parallelism}$`;

export function hashPassword(password: string): Promise<string> {
  return hash(password, PARAMS);
}

export async function verifyPassword(phc: string, password: string): Promise<boolean> {
  try {
    return await verify(phc, password);
  } catch {
    return false;
  }
}

export function needsRehash(phc: string): boolean {
  return !phc.startsWith(PARAM_TAG);
}

// Verified against when the user does not exist, so both failures take the same time.
let dummyHash: Promise<string> | undefined;
export async function dummyVerify(password: string): Promise<void> {
  dummyHash ??= hashPassword('dummy-password-for-timing-equalisation');
  await verifyPassword(await dummyHash, password);
}

// A shorter name is too likely to occur by chance in a good password (CONTRACT §3.7).
const MIN_USERNAME_LENGTH_IN_PASSWORD = 4;

/**
 * What is wrong with a password beyond the schema's length bounds (those are checked first, 400/2001), or
 * null when nothing is. Order: whitespace only, the username itself, the username inside, a common password.
 */
export function passwordPolicyViolation(password: string, username: string): string | null {
  if (password.trim() === '') return 'password must not be only whitespace';
  const folded = password.toLowerCase();
  const name = username.toLowerCase();
  if (folded === name) return 'password must not equal the username';
  if (name.length >= MIN_USERNAME_LENGTH_IN_PASSWORD && folded.includes(name)) return 'password must not contain the username';
  if (isCommonPassword(password)) return 'password is too common';
  return null;
}

/**
 * The password policy as a 400/2000. Whatever sets a password calls it: first-run setup, user creation,
 * password change, and the admin reset for the password it generates.
 */
export function assertPasswordPolicy(password: string, username: string): void {
  const violation = passwordPolicyViolation(password, username);
  if (violation !== null) throw ApiError.validation(violation);
}

/**
 * Whether a password the CEO or an operator set (CONTRACT §3.7) has outlived TEMP_PASSWORD_TTL_S; a password
 * the user chose has no such time and never expires.
 */
export function temporaryPasswordExpired(user: { temporaryPasswordSetAt: Date | null }, now: Date, ttlS: number): boolean {
  return user.temporaryPasswordSetAt !== null && now.getTime() - user.temporaryPasswordSetAt.getTime() >= ttlS * 1000;
}
