// HMAC-SHA256 under the server secret (cursors, CSRF tokens), with the secret imported as a key once.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

// createHmac with a Buffer imports it as a key on every call (a few % of a list request's CPU); the
// KeyObject is made once per secret.
const keys = new WeakMap<Buffer, KeyObject>();

/** The base64url HMAC-SHA256 of `message` under `secret`. */
export function hmac(secret: Buffer, message: string): string {
  let key = keys.get(secret);
  if (!key) keys.set(secret, (key = createSecretKey(secret)));
  return createHmac('sha256', key).update(message).digest('base64url');
}
