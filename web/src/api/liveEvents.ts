// Live updates without the DOM: which channels a page follows, what an event makes stale, and a feed that keeps events.subscribe going.
import type { QueryKey } from '@tanstack/preact-query';
import { problemOf, type RouterInputs, type RouterOutputs } from '../../../src/client/index.ts';
import type { PageName } from '../lib/routes.ts';
import { keys, type Channel } from './keys.ts';

export type SubscribeInput = RouterInputs['events']['subscribe'];
/** What `onData` receives: the event with its id (`tracked` on the server). */
export type TrackedEvent = RouterOutputs['events']['subscribe'] extends AsyncIterable<infer T> ? T : never;
export type LiveEvent = TrackedEvent['data'];

/**
 * The channels a page follows. `users` is on every page: a `user.updated` about the signed-in user changes
 * their role, which decides the navigation and the actions every page offers. The user's own
 * `session.revoked` arrives whatever the channels (CONTRACT §4.8).
 */
export function channelsFor(page: PageName): Channel[] {
  switch (page) {
    case 'approvals':
      return ['approvals', 'users'];
    case 'reviews':
    case 'review':
      return ['reviews', 'users'];
    case 'setup':
      return ['setup', 'users'];
    case 'sessions':
      return ['sessions', 'users'];
    default:
      return ['users'];
  }
}

/** Who is looking: the signed-in user, and this browser's session when it is known (from the sessions list). */
export type Viewer = { userId: string; sessionId: string | null };

export type Consequence = {
  /** Query keys (prefixes) whose data the event changed. */
  stale: QueryKey[];
  /** Set when the event ended this browser's own session: the reason, to show on the login page. */
  sessionEnded?: string;
};

const SETUP_STATUS: QueryKey = keys.setupStatus;

/**
 * What an event changes in the cache. Precise rather than a whole channel: the setup channel also keys the
 * catalogues (templates, presets, locales on offer), which no event changes and which are large.
 */
export function consequenceOf(event: LiveEvent, viewer: Viewer): Consequence {
  switch (event.type) {
    case 'approval.created':
    case 'approval.approved':
    case 'approval.rejected':
    case 'approval.expired':
      // Every filtered view of the queue: the event may move a request into or out of any of them.
      return { stale: [['approvals']] };
    case 'review.stage_decided':
      return { stale: [keys.stages(event.data.task_id)] };
    case 'user.created':
      return { stale: [keys.users] };
    case 'user.updated':
      return { stale: event.data.id === viewer.userId ? [keys.users, keys.me] : [keys.users] };
    case 'user.deleted':
      // The CEO's list of everyone's sessions loses the deleted user's; their own end by session.revoked.
      // The deleted user's API keys were revoked with them (CONTRACT §3.5).
      return { stale: event.data.id === viewer.userId ? [keys.users, keys.me] : [keys.users, keys.sessions('all'), keys.allApiKeys] };
    case 'setup.company_created':
    case 'setup.agent_created':
    case 'setup.agent_updated':
      return { stale: [SETUP_STATUS, keys.agents] };
    case 'setup.locales_updated':
      return { stale: [SETUP_STATUS, keys.locales] };
    case 'setup.completed':
      return { stale: [SETUP_STATUS] };
    case 'session.revoked':
      if (viewer.sessionId !== null && event.data.session_id === viewer.sessionId) return { stale: [], sessionEnded: SESSION_ENDED[event.data.reason] };
      return { stale: [['sessions']] };
  }
}

const SESSION_ENDED: Record<Extract<LiveEvent, { type: 'session.revoked' }>['data']['reason'], string> = {
  logout: 'You signed out in another window. Sign in again to continue.',
  revoked: 'This session was revoked. Sign in again to continue.',
  password_changed: 'Your password was changed elsewhere. Sign in again to continue.',
  evicted: 'This session was ended by a newer sign-in. Sign in again to continue.',
  refresh_replayed: 'Your session has ended for your security. Sign in again to continue.',
  user_deleted: 'Your account was deleted.',
};

/** How the feed stands, for the indicator: `live` once the stream is open, `off` when it stopped for good. */
export type FeedState = 'connecting' | 'live' | 'reconnecting' | 'off';

export type Subscribe = (
  input: SubscribeInput,
  callbacks: { onStarted: () => void; onData: (event: TrackedEvent) => void; onError: (error: unknown) => void; onComplete: () => void; onReconnecting: () => void },
) => { unsubscribe: () => void };

export type Timers = { set: (run: () => void, ms: number) => unknown; clear: (handle: unknown) => void };

const browserTimers: Timers = {
  set: (run, ms) => setTimeout(run, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export const RETRY_FIRST_MS = 1000;
export const RETRY_MAX_MS = 30_000;

export type FeedOptions = {
  channels: readonly Channel[];
  subscribe: Subscribe;
  onEvent: (event: LiveEvent) => void;
  /**
   * The stream opened without a position to resume from (the first time, or after the position was lost):
   * anything on the channels may have changed before it, so their data should be read again.
   */
  onFresh: (channels: readonly Channel[]) => void;
  onState: (state: FeedState) => void;
  timers?: Timers;
};

/**
 * Follows `events.subscribe` on `channels` until stopped. httpSubscriptionLink reconnects a dropped
 * connection by itself, resuming after the last event's id; this handles what ends a subscription:
 * another attempt after a pause (growing from 1 s to 30 s, or the server's `retry_after`) resuming after the
 * last id, a fresh start when that id is no longer retained (409), and nothing more once the session is
 * gone (401: the client has already tried its one refresh and reported the loss) or the user may not
 * follow (403). Returns the function that stops it.
 */
export function followEvents(opts: FeedOptions): () => void {
  const timers = opts.timers ?? browserTimers;
  const channels = [...opts.channels];
  let position: string | null = null;
  let failures = 0;
  let stopped = false;
  let current: { unsubscribe: () => void } | null = null;
  let retry: unknown = null;

  const open = () => {
    retry = null;
    opts.onState(failures === 0 ? 'connecting' : 'reconnecting');
    current = opts.subscribe(position === null ? { channels } : { channels, lastEventId: position }, {
      onStarted: () => {
        failures = 0;
        opts.onState('live');
        // Started again without a position (a dropped connection before any event): the gap is unknown.
        if (position === null) opts.onFresh(channels);
      },
      onData: (tracked) => {
        position = tracked.id;
        opts.onEvent(tracked.data);
      },
      onReconnecting: () => opts.onState('reconnecting'),
      onError: (error) => settle(error),
      // The server ends a stream without an error only when it wants the client back (overload, shutdown).
      onComplete: () => settle(null),
    });
  };

  const settle = (error: unknown) => {
    current = null;
    if (stopped) return;
    const problem = error === null ? null : problemOf(error);
    const status = problem?.status ?? null;
    if (status === 401 || status === 403) {
      stopped = true;
      opts.onState('off');
      return;
    }
    if (status === 409) {
      // The events after our position are no longer kept: start over, and read everything again.
      position = null;
      open();
      return;
    }
    failures += 1;
    const backoff = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1));
    const asked = (problem?.retry_after ?? 0) * 1000;
    opts.onState('reconnecting');
    retry = timers.set(open, Math.max(backoff, asked));
  };

  open();
  return () => {
    stopped = true;
    if (retry !== null) timers.clear(retry);
    current?.unsubscribe();
    current = null;
  };
}
