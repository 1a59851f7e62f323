// A link that renews the session once when a call or subscription fails for want of one, retries it, and otherwise reports the session lost.
import type { TRPCClientError, TRPCLink } from '@trpc/client';
import { observable, type Unsubscribable } from '@trpc/server/observable';
import type { AppRouter } from '../routers/index.ts';

export type SessionLost = (error: TRPCClientError<AppRouter>) => void;

/** The Web Locks name under which the tabs of one browser take turns to refresh (CONTRACT §3.7). */
export const REFRESH_LOCK = 'agent-org-refresh';

// Calls that establish or end a session answer 401 as their own result, not because one expired.
const EXEMPT = new Set(['auth.setup', 'auth.login', 'auth.refresh', 'auth.logout']);

export type RefreshOnceOptions = {
  refresh: () => Promise<unknown>;
  onSessionLost: SessionLost;
  /**
   * Something every refresh changes and every tab can read (the dashboard: the `csrf_token` cookie, which
   * is bound to the access token). A value that differs from the one a failed call was sent with means
   * the session was renewed elsewhere since, so the call is only sent again. Default: nothing to compare.
   */
  sessionMarker?: () => string | undefined;
};

export function refreshOnceLink(opts: RefreshOnceOptions): TRPCLink<AppRouter> {
  const marker = opts.sessionMarker ?? (() => undefined);
  // Bumped whenever a refresh settles. A 401 to a call sent before then is not a new loss: the call is
  // retried if that refresh worked, and fails quietly if it did not (the loss was reported once).
  let epoch = 0;
  let renewed = false;
  // Concurrent failures share one refresh (a refresh token is single-use; a second one would be a replay).
  let pending: Promise<boolean> | null = null;
  // The other tabs of this browser hold the same refresh token, so the refresh itself runs under a lock
  // they share; a tab that waited finds the session renewed (the marker moved) and does not present the
  // token that was just used, which would end the session by the replay rule (CONTRACT §3.3).
  const refreshUnlessRenewed = (sentWith: string | undefined): Promise<unknown> =>
    exclusive(REFRESH_LOCK, () => (marker() !== sentWith ? Promise.resolve() : opts.refresh()));
  const renew = (cause: TRPCClientError<AppRouter>, sentWith: string | undefined): Promise<boolean> =>
    (pending ??= refreshUnlessRenewed(sentWith)
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
          let sentWith = marker();
          current = next(retriedAt === null ? op : { ...op, input: resumeAfter(op.input, lastEventId) }).subscribe({
            next: (value) => {
              const result = value.result;
              if ('type' in result && result.type === 'started') {
                sentIn = epoch;
                sentWith = marker();
              }
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
              const outcome = epoch !== sentIn ? Promise.resolve(renewed) : renew(error, sentWith);
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
 * Runs `task` while holding the Web Lock `name`, shared by every tab of this origin; where there are no
 * Web Locks (a non-browser client, or a page that is not a secure context) the task runs at once, and only
 * the single-flight of this client protects the refresh token.
 */
function exclusive<T>(name: string, task: () => Promise<T>): Promise<T> {
  const locks = typeof navigator === 'undefined' ? undefined : navigator.locks;
  return locks ? locks.request(name, task) : task();
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
