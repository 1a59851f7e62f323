// Random tokens and their digests: only SHA-256 of a token is ever stored.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A base64url token from a CSPRNG; 32 bytes = 256 bits. */
export function newToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
