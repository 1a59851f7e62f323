// Shared pieces of the HTTP tests: request constants and an app.inject shortcut.
import type { TestService } from './service.ts';
import type { TestUser } from './users.ts';

/** Ask for errors as application/problem+json instead of the envelope. */
export const PROBLEM = { accept: 'application/problem+json' };

/** The CEO the auth tests create through first-run setup (POST /auth/setup) and then sign in as. */
export const CEO = { username: 'chief', password: 'correct horse battery staple' };

/**
 * `send(method, url, body?, user = defaultUser(), headers = {})`: app.inject of `/api/v1${url}` with the user's bearer
 * headers. Takes getters because a test file starts its service and users in beforeAll, after `send` is made.
 */
export function sender(svc: () => TestService, defaultUser: () => TestUser) {
  return (method: 'GET' | 'POST' | 'PUT', url: string, body?: object, user: TestUser = defaultUser(), headers: Record<string, string> = {}) =>
    svc().app.inject({ method, url: `/api/v1${url}`, headers: { ...user.headers, ...headers }, ...(body === undefined ? {} : { payload: body }) });
}
