// Test shortcuts: create users straight through the services and sign them in.
import { randomBytes } from 'node:crypto';
import { toApiError } from '../../src/errors.ts';
import { createAccount } from '../../src/services/auth/accounts.ts';
import { csrfTokenFor } from '../../src/services/auth/csrf.ts';
import type { Role } from '../../src/contracts/roles.ts';
import { issueSession } from '../../src/services/auth/sessions.ts';
import { startTestService, type TestService } from './service.ts';
import type { Clock } from '../../src/contracts/clock.ts';

export type TestUser = {
  id: string;
  username: string;
  password: string;
  role: Role;
  token: string;
  sessionId: string;
  refreshToken: string;
  csrfToken: string;
  /** Bearer headers for app.inject. */
  headers: { authorization: string };
  /** A createCaller bound to this user's bearer token. */
  caller: ReturnType<TestService['caller']>;
};

/** Creates a user (default role observer) with a live session. */
export async function createUser(svc: TestService, opts: { role?: Role; username?: string; password?: string; mustChangePassword?: boolean } = {}): Promise<TestUser> {
  const username = opts.username ?? `user_${randomBytes(4).toString('hex')}`;
  const password = opts.password ?? `pw-${randomBytes(8).toString('hex')}`;
  const role = opts.role ?? 'observer';
  const em = svc.deps.orm.em.fork();
  const { clock, config } = svc.deps;
  // Database errors (a taken username) reach the test as the API would answer them.
  const row = await em
    .transactional((tx) => createAccount({ em: tx, clock }, { username, password, role, mustChangePassword: opts.mustChangePassword ?? false }))
    .catch((error: unknown) => {
      throw toApiError(error);
    });
  const session = await em.transactional((tx) => issueSession({ em: tx, clock, config }, row.id, { ip: '127.0.0.1', userAgent: 'vitest' }));
  return {
    id: row.id,
    username,
    password,
    role,
    token: session.accessToken,
    sessionId: session.sessionId,
    refreshToken: session.refreshToken,
    csrfToken: csrfTokenFor(svc.deps.secret, session),
    headers: { authorization: `Bearer ${session.accessToken}` },
    caller: svc.caller({ bearerToken: session.accessToken }),
  };
}

/** `work`, and if it fails, `svc` closed before the error goes on (the caller never got hold of it to close). */
async function orClose<T>(svc: TestService, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await svc.close();
    throw error;
  }
}

/** A service with rate limits off (the tests send many requests as one user) and a signed-in CEO. */
export async function startWithCeo(opts: { clock?: Clock } = {}): Promise<{ svc: TestService; ceo: TestUser }> {
  const svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' }, ...opts });
  return { svc, ceo: await orClose(svc, () => createUser(svc, { role: 'ceo' })) };
}

/** startWithCeo() plus a signed-in observer, created after the CEO. */
export async function startWithCeoAndObserver(): Promise<{ svc: TestService; ceo: TestUser; observer: TestUser }> {
  const { svc, ceo } = await startWithCeo();
  return { svc, ceo, observer: await orClose(svc, () => createUser(svc, { role: 'observer' })) };
}
