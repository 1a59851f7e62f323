// Idempotent retries (CONTRACT §2.5): the first request with a key runs; its repeats get its result again.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors.ts';
import { hmac } from '../hmac.ts';
import { claimKey, completeKey, findKey, releaseKey } from './store.ts';
import type { Clock } from '../../contracts/clock.ts';

/** 1..255 printable ASCII characters (the IETF httpapi draft leaves the format to the server). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
const RETAIN_MS = 24 * 60 * 60 * 1000;
// Longer than any operation may run (their in-flight TTLs are shorter); a claim older than this was abandoned.
const LEASE_MS = 60 * 1000;

export type IdempotentRequest = {
  userId: string;
  key: string;
  /** The operation, e.g. `users.create`; the same key on another operation is another request. */
  operation: string;
  /** The request's input as sent; its canonical JSON is compared with the first request's. */
  input: unknown;
};

export type IdempotentOutcome<T> = { replayed: false; result: T } | { replayed: true; response: unknown };

/**
 * Runs `execute` once per (user, key). The claim is committed first, so a concurrent repeat sees it and gets
 * 429/5002; the result is stored in the transaction of the change itself, so a crash leaves either both or
 * neither. A failure gives the key back.
 */
export async function runIdempotent<T>(
  { em, clock, secret }: { em: EntityManager; clock: Clock; secret: Buffer },
  request: IdempotentRequest,
  execute: (tx: EntityManager) => Promise<T>,
): Promise<IdempotentOutcome<T>> {
  if (!IDEMPOTENCY_KEY_PATTERN.test(request.key)) {
    throw ApiError.badRequest('header.Idempotency-Key: must be 1..255 printable ASCII characters');
  }
  const fingerprint = fingerprintOf(secret, request.operation, request.input);
  const now = clock.now();
  const claimed = await claimKey(em.fork(), {
    userId: request.userId,
    key: request.key,
    operation: request.operation,
    fingerprint,
    now,
    leaseUntil: new Date(now.getTime() + LEASE_MS),
    expiresAt: new Date(now.getTime() + RETAIN_MS),
  });
  if (!claimed) return { replayed: true, response: await previousResponse(em, request, fingerprint) };

  try {
    const result = await em.transactional(async (tx) => {
      const value = await execute(tx);
      await completeKey(tx, request.userId, request.key, value);
      return value;
    });
    return { replayed: false, result };
  } catch (error) {
    await releaseKey(em.fork(), request.userId, request.key, fingerprint);
    throw error;
  }
}

async function previousResponse(em: EntityManager, request: IdempotentRequest, fingerprint: string): Promise<unknown> {
  const previous = await findKey(em.fork(), request.userId, request.key);
  // Released between our claim attempt and this read: the first request failed, so this one may run again.
  if (!previous) throw ApiError.rateLimited(5002, 1, 'a request with this Idempotency-Key is still in flight');
  if (previous.fingerprint !== fingerprint) throw ApiError.conflict('this Idempotency-Key was used with a different request');
  if (previous.response === null) throw ApiError.rateLimited(5002, 1, 'a request with this Idempotency-Key is still in flight');
  return previous.response;
}

/**
 * An HMAC under the server secret (CONTRACT §3.7), not a plain hash: a body may hold a password (POST /users),
 * and a fast hash of it in the database would let anyone with a dump or a backup test guesses offline. Each
 * field is length-prefixed behind its purpose, as in csrf.ts, so no other value the secret signs can match.
 */
function fingerprintOf(secret: Buffer, operation: string, input: unknown): string {
  const message = ['idempotency_fingerprint', operation, canonicalJson(input)].map((field) => `${field.length}!${field}`).join('!');
  return hmac(secret, message);
}

/** JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same body. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
