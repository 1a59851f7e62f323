// Resolves the API key a request presents into the actor it acts as (CONTRACT §3.5); guards.ts calls it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { isScope } from '../../contracts/apiKeys.ts';
import type { ApiKeyActor } from '../../contracts/actor.ts';
import type { Clock } from '../../contracts/clock.ts';
import { isRole, type Role } from '../../contracts/roles.ts';
import { ApiError } from '../../errors.ts';
import { safeEqual, sha256 } from '../auth/tokens.ts';
import { summariseGrants } from '../users/grants.ts';
import * as store from './store.ts';

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The key's user with the user's current role, read in the same lookup (so a role change applies to the next
 * request). Unknown or expired → 401/1000; revoked, or its user deleted → 401/1002. The lookup is by the hash
 * of the secret, which a caller cannot steer; the hashes are then compared in constant time all the same.
 */
export async function resolveApiKey({ em, clock }: { em: EntityManager; clock: Clock }, secret: string): Promise<ApiKeyActor> {
  const secretHash = sha256(secret);
  const row = await store.findKeyBySecretHash(em, secretHash);
  if (!row || !safeEqual(row.secretHash, secretHash)) throw ApiError.unauthorized('invalid or expired credentials');
  const now = clock.now();
  if (row.expiresAt !== null && row.expiresAt.getTime() <= now.getTime()) throw ApiError.unauthorized('invalid or expired credentials');
  const { username, role, kind } = row;
  if (row.revokedAt !== null || username === null || role === null || kind === null || !isRole(role)) throw ApiError.sessionRevoked('API key revoked');
  if (row.lastUsedAt === null || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    // At most one write a minute per key, never one per request.
    await store.touchKey(em, row.id, now, new Date(now.getTime() - LAST_USED_RESOLUTION_MS));
  }
  const { orgRoles, scopedDepartments } = summariseGrants(row.grants);
  return {
    userId: row.userId,
    username,
    role,
    kind,
    mustChangePassword: row.mustChangePassword === true,
    mfaEnabled: row.mfaEnabled === true,
    orgRoles,
    scopedDepartments,
    sessionId: null,
    via: 'api_key',
    apiKey: { id: row.id, name: row.name, prefix: row.prefix, scopes: row.scopes.filter(isScope) },
  };
}

/** Whether the key behind an open event stream still works (not revoked, not expired, its user there), and that user's role. */
export type ApiKeyState = { apiKeyId: string; ended: boolean; role: Role | null };

/** The state of the keys behind open streams, for the events' sweep (a key's revocation closes its streams). */
export async function apiKeyStates(em: EntityManager, ids: readonly string[], now: Date): Promise<ApiKeyState[]> {
  const found = new Map((await store.keyStates(em, ids)).map((row) => [row.id, row]));
  return ids.map((apiKeyId) => {
    const row = found.get(apiKeyId);
    const role = row?.role !== undefined && row.role !== null && isRole(row.role) ? row.role : null;
    const ended = !row || row.revokedAt !== null || (row.expiresAt !== null && row.expiresAt.getTime() <= now.getTime()) || role === null;
    return { apiKeyId, ended, role };
  });
}
