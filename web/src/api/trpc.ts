// The dashboard's one tRPC client (src/client), and what happens when the session is gone for good.
import { createClient } from '../../../src/client/index.ts';
import { keys } from './keys.ts';
import { queryClient } from './queryClient.ts';

let notice: string | null = null;

/** Shown once by the login page: why the user is there. */
export function takeSessionNotice(): string | null {
  const n = notice;
  notice = null;
  return n;
}

/**
 * Signed out (logout, or a session that could not be renewed): every cached answer belonged to that
 * session and goes; `me` and the two-factor status become null (kept, not removed: the shell follows them), and
 * the router shows the login page.
 */
export function signedOut(reason: string | null): void {
  if (reason !== null && queryClient.getQueryData(keys.me)) notice = reason;
  queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== 'users' || (q.queryKey[1] !== 'me' && q.queryKey[1] !== 'mfa') });
  queryClient.setQueryData(keys.me, null);
  queryClient.setQueryData(keys.mfa, null);
}

export const trpc = createClient({
  onSessionLost: () => signedOut('Your session has ended. Sign in again to continue.'),
});
