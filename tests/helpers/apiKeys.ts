// Test shortcuts for API keys: service accounts and keys made through the API itself, and a key's bearer headers and caller.
import { randomBytes } from 'node:crypto';
import type { Scope } from '../../src/contracts/apiKeys.ts';
import type { Role } from '../../src/contracts/roles.ts';
import type { TestService } from './service.ts';
import type { TestUser } from './users.ts';

export type TestKey = {
  id: string;
  secret: string;
  userId: string;
  /** Bearer headers for app.inject. */
  headers: { authorization: string };
  /** A createCaller bound to the key (the transport would put it in `bearerToken`). */
  caller: ReturnType<TestService['caller']>;
};

/** A key issued by `issuer` (for itself, or with `userId` for that user; the CEO may name anyone). */
export async function issueKey(svc: TestService, issuer: TestUser, scopes: Scope[], opts: { userId?: string; name?: string; expiresAt?: string } = {}): Promise<TestKey> {
  const created = await issuer.caller.apiKeys.create({
    name: opts.name ?? `key ${randomBytes(3).toString('hex')}`,
    scopes,
    ...(opts.userId === undefined ? {} : { user_id: opts.userId }),
    ...(opts.expiresAt === undefined ? {} : { expires_at: opts.expiresAt }),
  });
  return keyOf(svc, created.id, created.secret, created.user_id);
}

export function keyOf(svc: TestService, id: string, secret: string, userId: string): TestKey {
  return { id, secret, userId, headers: { authorization: `Bearer ${secret}` }, caller: svc.caller({ bearerToken: secret }) };
}

/** A service account created by the CEO through users.create (no password), and its id. */
export async function createServiceAccount(ceo: TestUser, role: Role = 'manager', username = `bot_${randomBytes(4).toString('hex')}`): Promise<{ id: string; username: string }> {
  const user = await ceo.caller.users.create({ username, role, kind: 'service' });
  return { id: user.id, username: user.username };
}
