// A link that renews the session once when a call fails for want of one, retries the call, and otherwise reports the session lost.
import type { TRPCClientError, TRPCLink } from '@trpc/client';
import { observable, type Unsubscribable } from '@trpc/server/observable';
import type { AppRouter } from '../routers/index.ts';

export type SessionLost = (error: TRPCClientError<AppRouter>) => void;

// Calls that establish or end a session answer 401 as their own result, not because one expired.
const EXEMPT = new Set(['auth.setup', 'auth.login', 'auth.refresh', 'auth.logout']);

export function refreshOnceLink(opts: { refresh: () => Promise<unknown>; onSessionLost: SessionLost }): TRPCLink<AppRouter> {
  // Bumped by each successful refresh: a 401 to a call sent before it is stale, and retried without refreshing again.
  let generation = 0;
  // Concurrent failures share one refresh (a refresh token is single-use; a second one would be a replay).
  let pending: Promise<boolean> | null = null;
  const renew = (cause: TRPCClientError<AppRouter>): Promise<boolean> =>
    (pending ??= opts
      .refresh()
      .then(
        () => {
          generation += 1;
          return true;
        },
        () => {
          opts.onSessionLost(cause);
          return false;
        },
      )
      .finally(() => {
        pending = null;
      }));

  return () =>
    ({ op, next }) =>
      observable((observer) => {
        let current: Unsubscribable | null = null;
        let closed = false;
        const send = (isRetry: boolean) => {
          const sentIn = generation;
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
              const renewed = generation !== sentIn ? Promise.resolve(true) : renew(error);
              void renewed.then((ok) => {
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
