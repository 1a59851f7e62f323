// Password policy and hashing: argon2id with PHC strings, rehash when parameters change (CONTRACT §3.4).
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { MIN_PASSWORD_LENGTH } from '../../contracts/passwords.ts';
import { ApiError } from '../../errors.ts';


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

/** Business rules beyond the schema's length bounds; violations are 400/2000. */
export function assertPasswordPolicy(password: string, username: string): void {
  if (password.trim() === '') throw ApiError.validation('password must not be only whitespace');
  if (password.toLowerCase() === username.toLowerCase()) throw ApiError.validation('password must not equal the username');
}
