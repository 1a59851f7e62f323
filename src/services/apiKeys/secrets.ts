// The key itself (CONTRACT §3.5): `aok_` + base64url text of 256 random bits, recognisable by its shape.
import { randomBytes } from 'node:crypto';
import { API_KEY_PREFIX, API_KEY_PREFIX_LENGTH } from '../../contracts/apiKeys.ts';

const SECRET_BYTES = 32;

// 32 bytes are 43 base64url characters. A session's access token has no `aok_` and is 43 characters long in
// all, so the shape alone tells the two credentials apart without a query.
const API_KEY_SHAPE = /^aok_[A-Za-z0-9_-]{43}$/;

export function newApiKeySecret(): string {
  return `${API_KEY_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`;
}

/** Whether a bearer token is an API key; anything else is read as a session's access token. */
export function isApiKeyShaped(token: string): boolean {
  return API_KEY_SHAPE.test(token);
}

/** What lists show of a key: too little to use it, enough to tell keys apart. */
export function prefixOf(secret: string): string {
  return secret.slice(0, API_KEY_PREFIX_LENGTH);
}
