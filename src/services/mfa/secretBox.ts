// Seals TOTP keys at rest: AES-256-GCM under a key derived from the server secret, each sealed for the user it belongs to.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// A key of its own for this one use (HKDF, RFC 5869): the server secret itself only signs (cursors, CSRF tokens).
const KEY_INFO = 'agent-org: TOTP keys at rest, v1';

const keys = new WeakMap<Buffer, Buffer>();

function sealingKey(serverSecret: Buffer): Buffer {
  let key = keys.get(serverSecret);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', serverSecret, Buffer.alloc(0), KEY_INFO, 32));
    keys.set(serverSecret, key);
  }
  return key;
}

/**
 * `v1.<base64url of IV, ciphertext and tag>`. The user id is the additional data: a sealed key copied onto
 * another user's row does not open there.
 */
export function seal(serverSecret: Buffer, plaintext: Uint8Array, userId: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(serverSecret), iv);
  cipher.setAAD(Buffer.from(userId));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `${FORMAT}.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
}

/**
 * The key sealed by `seal` for this user. A failure is not the user's doing (APP_SECRET was changed since, or
 * the row was altered), so it is an error of the service, and the way out is the CEO's or the operator's reset.
 */
export function open(serverSecret: Buffer, sealed: string, userId: string): Uint8Array {
  const [format, encoded] = sealed.split('.');
  const bytes = Buffer.from(encoded ?? '', 'base64url');
  if (format !== FORMAT || bytes.length < IV_BYTES + TAG_BYTES) throw new Error('a stored TOTP key has an unknown format');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(serverSecret), bytes.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(userId));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  try {
    return new Uint8Array(Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]));
  } catch {
    throw new Error('a stored TOTP key does not open under the server secret (was APP_SECRET changed? reset the user\'s two-factor authentication)');
  }
}
