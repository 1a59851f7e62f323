// Live updates in the page: follows events.subscribe for the current page's channels and refreshes the queries each event makes stale.
import type { QueryKey } from '@tanstack/preact-query';
import { useEffect, useState } from 'preact/hooks';
import type { RouterOutputs } from '../../../src/client/index.ts';
import { keys, type Channel } from './keys.ts';
import { consequenceOf, followEvents, type FeedState, type Subscribe, type Viewer } from './liveEvents.ts';
import { queryClient } from './queryClient.ts';
import { signedOut, trpc } from './trpc.ts';

// Events of one burst (a replay after a reconnect) refresh each query once, not once per event.
const BURST_MS = 15;

const subscribe: Subscribe = (input, callbacks) =>
  trpc.events.subscribe.subscribe(input, {
    onStarted: callbacks.onStarted,
    onData: callbacks.onData,
    onError: callbacks.onError,
    onComplete: callbacks.onComplete,
    onConnectionStateChange: (state) => {
      if (state.state === 'connecting' && state.error !== null) callbacks.onReconnecting();
    },
  });

type Sessions = RouterOutputs['auth']['listSessions'];

/** This browser's session id, when a sessions list has been read (the only answer that names it). */
function currentSessionId(): string | null {
  for (const scope of ['own', 'all'] as const) {
    const current = queryClient.getQueryData<Sessions>(keys.sessions(scope))?.find((s) => s.is_current);
    if (current) return current.session_id;
  }
  return null;
}

/**
 * Subscribes while `userId` is signed in (null: nobody, or a user who must change the password first and
 * may follow nothing) to `channels`; a change of either starts a new subscription. Returns the feed's state.
 */
export function useLiveEvents(userId: string | null, channels: readonly Channel[]): FeedState {
  const [state, setState] = useState<FeedState>(userId === null ? 'off' : 'connecting');
  const channelList = channels.join(',');
  useEffect(() => {
    if (userId === null) {
      setState('off');
      return;
    }
    const pending = new Map<string, QueryKey>();
    let flush: ReturnType<typeof setTimeout> | null = null;
    const markStale = (key: QueryKey) => {
      pending.set(JSON.stringify(key), key);
      flush ??= setTimeout(() => {
        flush = null;
        const stale = [...pending.values()];
        pending.clear();
        for (const queryKey of stale) void queryClient.invalidateQueries({ queryKey });
      }, BURST_MS);
    };
    const stop = followEvents({
      channels,
      subscribe,
      onState: setState,
      onFresh: (fresh) => {
        for (const channel of fresh) markStale([channel]);
      },
      onEvent: (event) => {
        const viewer: Viewer = { userId, sessionId: currentSessionId() };
        const { stale, sessionEnded } = consequenceOf(event, viewer);
        if (sessionEnded !== undefined) {
          stop();
          signedOut(sessionEnded);
          return;
        }
        for (const key of stale) markStale(key);
      },
    });
    return () => {
      stop();
      if (flush !== null) clearTimeout(flush);
    };
  }, [userId, channelList]);
  return state;
}
