// Creating user accounts, shared by first-run setup and user administration; uniqueness is the database's job.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { insertUser, type StoredUser } from '../users/store.ts';
import { assertPasswordPolicy, hashPassword } from './passwords.ts';
import type { Role } from '../../contracts/roles.ts';
import { usernameKey, usernameSkeletonKey } from './usernameKeys.ts';
import type { Clock } from '../../contracts/clock.ts';

/**
 * Checks the password policy, hashes the password and inserts the user. A taken username or a second CEO
 * fails on its unique index, which errors.ts maps (409/4001, 409/4000).
 */
export async function createAccount(
  { em, clock }: { em: EntityManager; clock: Clock },
  input: { username: string; password: string; role: Role; mustChangePassword: boolean },
): Promise<StoredUser> {
  // Stored the way the request schema normalises it, whoever calls (CONTRACT §3.4).
  const username = input.username.trim().normalize('NFC');
  assertPasswordPolicy(input.password, username);
  const passwordHash = await hashPassword(input.password);
  const now = clock.now();
  return insertUser(em, {
    id: randomUUID(),
    username,
    usernameKey: usernameKey(username),
    usernameSkeleton: usernameSkeletonKey(username),
    passwordHash,
    role: input.role,
    kind: 'human',
    mustChangePassword: input.mustChangePassword,
    // A password someone else chose for the user is temporary: it expires (CONTRACT §3.7).
    temporaryPasswordSetAt: input.mustChangePassword ? now : null,
    createdAt: now,
    updatedAt: now,
  });
}

/**
 * A service account (CONTRACT §3.5): a user that is a program, with no password (nothing can sign in as it)
 * and nothing to change first; it acts only through API keys. Names are unique across both kinds.
 */
export async function createServiceAccount({ em, clock }: { em: EntityManager; clock: Clock }, input: { username: string; role: Role }): Promise<StoredUser> {
  const username = input.username.trim().normalize('NFC');
  const now = clock.now();
  return insertUser(em, {
    id: randomUUID(),
    username,
    usernameKey: usernameKey(username),
    usernameSkeleton: usernameSkeletonKey(username),
    passwordHash: null,
    role: input.role,
    kind: 'service',
    mustChangePassword: false,
    temporaryPasswordSetAt: null,
    createdAt: now,
    updatedAt: now,
  });
}
