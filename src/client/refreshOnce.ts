// A link that renews the session once when a call or subscription fails for want of one, retries it, and otherwise reports the session lost.
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
        // A subscription is one call for hours: its EventSource reconnects by itself, each time with the
        // cookies of that moment. So what counts is the epoch of its latest connection, and the id of the
        // last tracked event it delivered, to resume from when it is sent again after a refresh.
        let lastEventId: string | undefined;
        const send = (retriedAt: number | null) => {
          let sentIn = epoch;
          current = next(retriedAt === null ? op : { ...op, input: resumeAfter(op.input, lastEventId) }).subscribe({
            next: (value) => {
              const result = value.result;
              if ('type' in result && result.type === 'started') sentIn = epoch;
              if ('id' in result && typeof result.id === 'string') lastEventId = result.id;
              observer.next(value);
            },
            complete: () => observer.complete(),
            error: (error) => {
              const lost = error.data?.httpStatus === 401 && !EXEMPT.has(op.path);
              if (!lost) return observer.error(error);
              if (retriedAt !== null && (op.type !== 'subscription' || Date.now() - retriedAt < SUBSCRIPTION_RETRY_WINDOW_MS)) {
                opts.onSessionLost(error);
                return observer.error(error);
              }
              const outcome = epoch !== sentIn ? Promise.resolve(renewed) : renew(error);
              void outcome.then((ok) => {
                if (closed) return;
                if (ok) send(Date.now());
                else observer.error(error);
              });
            },
          });
        };
        send(null);
        return () => {
          closed = true;
          current?.unsubscribe();
        };
      });
}

/**
 * A subscription sent again after a refresh fails for good if it is refused again within this window; a
 * refusal later on (e.g. the renewed access token expired before a reconnect) is a new loss with its own refresh.
 */
const SUBSCRIPTION_RETRY_WINDOW_MS = 30_000;

/** The input of a subscription resumed after `lastEventId`, as httpSubscriptionLink itself does on a reconnect. */
function resumeAfter(input: unknown, lastEventId: string | undefined): unknown {
  if (lastEventId === undefined || typeof input !== 'object' || input === null) return input;
  return { ...input, lastEventId };
}
