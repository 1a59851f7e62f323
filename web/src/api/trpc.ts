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

/** Cached answers that outlive a session: the shell follows them to choose the page. */
const KEPT_WHEN_SIGNED_OUT = new Set([keys.me, keys.mfa, keys.setupStatus].map((key) => JSON.stringify(key)));

/**
 * Signed out (logout, or a session that could not be renewed): every cached answer of that session goes;
 * `me` and the two-factor status become null (kept, not removed: the shell follows them), and the router shows
 * the login page. The setup status stays: it is the organization's, and dropping it would have the shell show
 * a spinner until it came back, unmounting the page under the user's typing (the first-run form on a first
 * visit, whose stale session's refresh fails right after the page appears).
 */
export function signedOut(reason: string | null): void {
  if (reason !== null && queryClient.getQueryData(keys.me)) notice = reason;
  queryClient.removeQueries({ predicate: (q) => !KEPT_WHEN_SIGNED_OUT.has(JSON.stringify(q.queryKey)) });
  queryClient.setQueryData(keys.me, null);
  queryClient.setQueryData(keys.mfa, null);
}

export const trpc = createClient({
  onSessionLost: () => signedOut('Your session has ended. Sign in again to continue.'),
});
