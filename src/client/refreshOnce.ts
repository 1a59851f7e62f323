// A link that renews the session once when a call fails for want of one, retries the call, and otherwise reports the session lost.
import type { TRPCClientError, TRPCLink } from '@trpc/client';
import { observable, type Unsubscribable } from '@trpc/server/observable';
import type { AppRouter } from '../routers/index.ts';

export type SessionLost = (error: TRPCClientError<AppRouter>) => void;

// Calls that establish or end a session answer 401 as their own result, not because one expired.
const EXEMPT = new Set(['auth.setup', 'auth.login', 'auth.refresh', 'auth.logout']);

export function refreshOnceLink(opts: { refresh: () => Promise<unknown>; onSessionLost: SessionLost }): TRPCLink<AppRouter> {
  // Bumped whenever a refresh settles. A 401 to a call sent before then is not a new loss: the call is
  // retried if that refresh worked, and fails quietly if it did not (the loss was reported once).
  let epoch = 0;
  let renewed = false;
  // Concurrent failures share one refresh (a refresh token is single-use; a second one would be a replay).
  let pending: Promise<boolean> | null = null;
  const renew = (cause: TRPCClientError<AppRouter>): Promise<boolean> =>
    (pending ??= opts
      .refresh()
      .then(
        () => {
          renewed = true;
          return true;
        },
        () => {
          renewed = false;
          opts.onSessionLost(cause);
          return false;
        },
      )
      .finally(() => {
        epoch += 1;
        pending = null;
      }));

  return () =>
    ({ op, next }) =>
      observable((observer) => {
        let current: Unsubscribable | null = null;
        let closed = false;
        const send = (isRetry: boolean) => {
          const sentIn = epoch;
          current = next(op).subscribe({
            next: (value) => observer.next(value),
            complete: () => observer.complete(),
            error: (error) => {
              const lost = error.data?.httpStatus === 401 && op.type !== 'subscription' && !EXEMPT.has(op.path);
              if (!lost) return observer.error(error);
              if (isRetry) {
                opts.onSessionLost(error);
                return observer.error(error);
              }
              const outcome = epoch !== sentIn ? Promise.resolve(renewed) : renew(error);
              void outcome.then((ok) => {
                if (closed) return;
                if (ok) send(true);
                else observer.error(error);
              });
            },
          });
        };
        send(false);
        return () => {
          closed = true;
          current?.unsubscribe();
        };
      });
}
