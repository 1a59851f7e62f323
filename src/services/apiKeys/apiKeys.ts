// API-key management (CONTRACT §3.5): issue (the secret shown once), list, read and revoke; a user's own, or anyone's for the CEO.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import {
  MAX_ACTIVE_API_KEYS_PER_USER,
  MAX_API_KEY_LIFETIME_DAYS,
  type ApiKeyResponse,
  type CreateApiKeyInput,
  type CreatedApiKeyResponse,
  type ListApiKeysInput,
} from '../../contracts/apiKeys.ts';
import type { Actor } from '../../contracts/actor.ts';
import type { Clock } from '../../contracts/clock.ts';
import { DEFAULT_PAGE_SIZE, type Pagination } from '../../contracts/pagination.ts';
import { ApiError } from '../../errors.ts';
import { recordEvent } from '../../events/record.ts';
import { sha256 } from '../auth/tokens.ts';
import { decodeCursor, toPage } from '../pagination.ts';
import * as users from '../users/store.ts';
import { isUserId } from '../users/users.ts';
import { newApiKeySecret, prefixOf } from './secrets.ts';
import * as store from './store.ts';

export const API_KEYS_LIST = 'api_keys';
const DAY_MS = 24 * 3600 * 1000;

/** The one mapping from a stored key to the wire, in the schema's key order. */
export function toApiKeyResponse(key: store.ApiKeyWithOwner): ApiKeyResponse {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    user_id: key.userId,
    username: key.username,
    scopes: key.scopes,
    created_at: key.createdAt.toISOString(),
    created_by: key.createdBy,
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

/** Anyone for themselves, the CEO for anyone: another user's id from anyone else is 403 (before it is looked up). */
function mayActFor(actor: Actor, userId: string): boolean {
  return userId === actor.userId || actor.role === 'ceo';
}

function expiryOf(expiresAt: string | null | undefined, now: Date): Date | null {
  if (expiresAt === undefined || expiresAt === null) return null;
  const at = new Date(expiresAt);
  if (at.getTime() <= now.getTime()) throw ApiError.validation('expires_at must be in the future');
  if (at.getTime() > now.getTime() + MAX_API_KEY_LIFETIME_DAYS * DAY_MS) throw ApiError.validation(`expires_at must be at most ${MAX_API_KEY_LIFETIME_DAYS} days ahead`);
  return at;
}

/**
 * Issues a key for the caller or (the CEO) any user, under that user's lock so that the cap of active keys
 * holds against concurrent issues. The secret is in this answer only; the database keeps its SHA-256.
 */
export async function createApiKey({ em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor }, input: CreateApiKeyInput): Promise<CreatedApiKeyResponse> {
  const userId = input.user_id ?? actor.userId;
  if (!mayActFor(actor, userId)) throw ApiError.forbidden('only the CEO may issue API keys for another user');
  const expiresAt = expiryOf(input.expires_at, clock.now());
  return em.transactional(async (tx) => {
    if (!isUserId(userId) || !(await users.lockUser(tx, userId))) throw ApiError.notFound('user not found');
    const owner = await users.findUser(tx, userId);
    if (!owner) throw ApiError.notFound('user not found');
    const now = clock.now();
    if ((await store.countActiveKeys(tx, userId, now)) >= MAX_ACTIVE_API_KEYS_PER_USER) {
      throw ApiError.conflict(`at most ${MAX_ACTIVE_API_KEYS_PER_USER} active API keys per user; revoke one first`);
    }
    const secret = newApiKeySecret();
    const key = {
      id: randomUUID(),
      secretHash: sha256(secret),
      userId,
      name: input.name,
      prefix: prefixOf(secret),
      scopes: input.scopes,
      createdAt: now,
      createdBy: actor.username,
      expiresAt,
      lastUsedAt: null,
      revokedAt: null,
    };
    await store.insertApiKey(tx, key);
    const data = { name: key.name, prefix: key.prefix, user_id: userId, username: owner.username, scopes: key.scopes, expires_at: expiresAt?.toISOString() ?? null };
    await recordEvent(tx, { type: 'api_key.created', actor: actor.username, at: now, target: { type: 'api_key', id: key.id }, data });
    return { ...toApiKeyResponse({ ...key, username: owner.username }), secret };
  });
}

const KeyPosition = z.tuple([z.iso.datetime({ precision: 3 }), z.string().refine(isUserId)]);

/** Newest first: the caller's own keys, or for the CEO everyone's (or one user's, with `user_id`). */
export async function listApiKeys(
  { em, secret, actor }: { em: EntityManager; secret: Buffer; actor: Actor },
  input: ListApiKeysInput,
): Promise<{ items: ApiKeyResponse[]; pagination: Pagination }> {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const filter = input.user_id ?? null;
  if (filter !== null && !mayActFor(actor, filter)) throw ApiError.forbidden("only the CEO may list another user's API keys");
  let after: { createdAt: Date; id: string } | null = null;
  if (input.cursor) {
    const position = KeyPosition.safeParse(decodeCursor(secret, API_KEYS_LIST, input.cursor));
    if (!position.success) throw ApiError.badRequest('query.cursor: invalid or expired cursor');
    after = { createdAt: new Date(position.data[0]), id: position.data[1] };
  }
  const userId = actor.role === 'ceo' ? filter : actor.userId;
  // An id that is no user's id names nobody: an empty list, without reaching a uuid cast.
  const keys = userId !== null && !isUserId(userId) ? [] : await store.keyPage(em, { userId, after, fetch: limit + 1 });
  return toPage(keys, { limit, secret, list: API_KEYS_LIST, positionOf: (k) => [k.createdAt.toISOString(), k.id], toItem: toApiKeyResponse });
}

/** A key the caller may see: its own, or any for the CEO; anything else reads as absent (no enumeration). */
async function visibleKey(em: EntityManager, actor: Actor, keyId: string): Promise<store.ApiKeyWithOwner> {
  const key = isUserId(keyId) ? await store.findKey(em, keyId) : undefined;
  if (!key || !mayActFor(actor, key.userId)) throw ApiError.notFound('API key not found');
  return key;
}

export async function getApiKey({ em, actor }: { em: EntityManager; actor: Actor }, keyId: string): Promise<ApiKeyResponse> {
  return toApiKeyResponse(await visibleKey(em, actor, keyId));
}

/**
 * Revokes the key (idempotent: an already revoked one keeps its revoked_at, and records nothing again).
 * Requests made with it get 1002 from now on.
 */
export async function revokeApiKey({ em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor }, keyId: string): Promise<void> {
  const key = await visibleKey(em, actor, keyId);
  await em.transactional(async (tx) => {
    const now = clock.now();
    if (!(await store.revokeKey(tx, key.id, now))) return;
    const data = { name: key.name, prefix: key.prefix, user_id: key.userId, username: key.username };
    await recordEvent(tx, { type: 'api_key.revoked', actor: actor.username, at: now, target: { type: 'api_key', id: key.id }, data });
  });
}

/** Revokes every key of a user (the user's deletion, `npm run admin -- revoke-api-keys`); call inside the caller's transaction. */
export async function revokeUserApiKeys({ em, clock }: { em: EntityManager; clock: Clock }, userId: string): Promise<number> {
  return store.revokeUserKeys(em, userId, clock.now());
}
