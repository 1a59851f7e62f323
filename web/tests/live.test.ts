// Live updates' logic: the channels each page follows, what each event makes stale, and how the feed resumes, starts over or stops.
import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import type { AppRouter, Problem } from '../../src/client/index.ts';
import { keys } from '../src/api/keys.ts';
import {
  channelsFor,
  consequenceOf,
  followEvents,
  RETRY_FIRST_MS,
  RETRY_MAX_MS,
  type FeedState,
  type LiveEvent,
  type Subscribe,
  type SubscribeInput,
  type Timers,
  type TrackedEvent,
} from '../src/api/liveEvents.ts';

const at = '2026-11-23T10:00:00.000Z';
const approval = {
  id: 'a-1',
  action_type: 'deploy:production',
  title: 'Ship',
  description: 'Release',
  risk_level: 'low',
  status: 'pending',
  requested_by: 'mia',
  decided_by: null,
  decision_reason: null,
  decided_at: null,
  created_at: at,
  expires_at: null,
  task_id: null,
  metadata: {},
  seconds_remaining: null,
  urgency_level: 'no_expiry',
} as const;
const user = (id: string) => ({ id, username: `u-${id}`, role: 'manager' as const, kind: 'human' as const, must_change_password: false, mfa_enabled: false, org_roles: [], scoped_departments: [], created_at: at, updated_at: at });
const base = { id: '7', occurred_at: at, actor: 'ceo' };
const viewer = { userId: 'me', sessionId: 's-mine' };

describe('channelsFor: what a page follows', () => {
  it('each page follows the channel of what it shows, and every page follows users (the signed-in role)', () => {
    expect(channelsFor('approvals')).toEqual(['approvals', 'users']);
    expect(channelsFor('review')).toEqual(['reviews', 'users']);
    expect(channelsFor('reviews')).toEqual(['reviews', 'users']);
    expect(channelsFor('users')).toEqual(['users']);
    expect(channelsFor('setup')).toEqual(['setup', 'users']);
    expect(channelsFor('sessions')).toEqual(['sessions', 'users']);
    expect(channelsFor('status')).toEqual(['users']);
    expect(channelsFor('api-keys')).toEqual(['users']);
  });
});

describe('consequenceOf: the queries an event makes stale', () => {
  it('any approval event makes every view of the queue stale, whatever its filters', () => {
    for (const type of ['approval.created', 'approval.approved', 'approval.rejected', 'approval.expired'] as const) {
      const event: LiveEvent = { ...base, type, channel: 'approvals', data: approval };
      expect(consequenceOf(event, viewer)).toEqual({ stale: [['approvals']] });
    }
    // A prefix of the list keys with any filters.
    expect(keys.approvals({ status: 'approved' }).slice(0, 1)).toEqual(['approvals']);
  });

  it("a stage decision makes that task's stages stale, not other tasks'", () => {
    const event: LiveEvent = {
      ...base,
      type: 'review.stage_decided',
      channel: 'reviews',
      data: { task_id: 't-9', stage_name: 'security', verdict: 'pass', reason: null, decided_by: 'pat', decided_at: at },
    };
    expect(consequenceOf(event, viewer)).toEqual({ stale: [keys.stages('t-9')] });
  });

  it("user events refresh the users list, the signed-in user only when the event is about them, and a deletion the keys it revoked", () => {
    expect(consequenceOf({ ...base, type: 'user.created', channel: 'users', data: user('x') }, viewer)).toEqual({ stale: [keys.users] });
    expect(consequenceOf({ ...base, type: 'user.updated', channel: 'users', data: user('x') }, viewer)).toEqual({ stale: [keys.users] });
    expect(consequenceOf({ ...base, type: 'user.updated', channel: 'users', data: user('me') }, viewer)).toEqual({ stale: [keys.users, keys.me] });
    expect(consequenceOf({ ...base, type: 'user.deleted', channel: 'users', data: { id: 'x', username: 'u-x' } }, viewer)).toEqual({
      stale: [keys.users, keys.sessions('all'), keys.allApiKeys],
    });
    // The pickers' list of every user and every view of the API keys lie below those prefixes.
    expect(keys.everyone.slice(0, 2)).toEqual(keys.users);
    expect(keys.apiKeys('u-1').slice(0, 2)).toEqual(keys.allApiKeys);
  });

  it('setup events refresh the status and what changed, never the catalogues (templates, presets, locales on offer)', () => {
    const agent = { agent_index: 0, name: 'Ada', role: 'cto', department: 'engineering', model_provider: 'p', model_id: 'm' };
    const summary = { ...agent, level: 'senior', tier: 'large', personality_preset: 'pragmatic_builder' } as const;
    const company = { company_name: 'Acme', description: null, template_applied: null, department_count: 1, agent_count: 1, agents: [summary] };
    const events: LiveEvent[] = [
      { ...base, type: 'setup.company_created', channel: 'setup', data: company },
      { ...base, type: 'setup.agent_created', channel: 'setup', data: agent },
      { ...base, type: 'setup.agent_updated', channel: 'setup', data: summary },
      { ...base, type: 'setup.locales_updated', channel: 'setup', data: { locales: ['en_US'] } },
      { ...base, type: 'setup.completed', channel: 'setup', data: { setup_complete: true, completed_at: at } },
    ];
    expect(events.map((e) => consequenceOf(e, viewer).stale)).toEqual([
      [keys.setupStatus, keys.agents],
      [keys.setupStatus, keys.agents],
      [keys.setupStatus, keys.agents],
      [keys.setupStatus, keys.locales],
      [keys.setupStatus],
    ]);
  });

  it("session.revoked for this browser's session ends it with a reason; another session's refreshes the sessions lists", () => {
    const revoked = (session_id: string, reason: 'logout' | 'revoked' | 'password_changed'): LiveEvent => ({
      ...base,
      type: 'session.revoked',
      channel: 'sessions',
      data: { session_id, reason },
    });
    expect(consequenceOf(revoked('s-mine', 'revoked'), viewer)).toEqual({ stale: [], sessionEnded: 'This session was revoked. Sign in again to continue.' });
    expect(consequenceOf(revoked('s-mine', 'password_changed'), viewer).sessionEnded).toMatch(/password was changed/);
    expect(consequenceOf(revoked('s-other', 'logout'), viewer)).toEqual({ stale: [['sessions']] });
    // Not knowing this browser's session id, nothing is assumed (the stream's 401/1002 ends it if it was ours).
    expect(consequenceOf(revoked('s-mine', 'revoked'), { userId: 'me', sessionId: null })).toEqual({ stale: [['sessions']] });
  });
});

/** A scripted events.subscribe: the test plays the server's side of each subscription. */
class FakeServer {
  subscriptions: { input: SubscribeInput; callbacks: Parameters<Subscribe>[1]; open: boolean }[] = [];
  subscribe: Subscribe = (input, callbacks) => {
    const entry = { input, callbacks, open: true };
    this.subscriptions.push(entry);
    return {
      unsubscribe: () => {
        entry.open = false;
      },
    };
  };
  get last() {
    const s = this.subscriptions.at(-1);
    if (!s) throw new Error('nothing subscribed');
    return s;
  }
  send(id: string, event: LiveEvent) {
    const tracked: TrackedEvent = { id, data: event };
    this.last.callbacks.onData(tracked);
  }
}

class FakeTimers implements Timers {
  pending: { run: () => void; ms: number; handle: number }[] = [];
  private next = 0;
  set = (run: () => void, ms: number) => {
    this.next += 1;
    this.pending.push({ run, ms, handle: this.next });
    return this.next;
  };
  clear = (handle: unknown) => {
    this.pending = this.pending.filter((t) => t.handle !== handle);
  };
  fire(): number {
    const t = this.pending.shift();
    if (!t) throw new Error('no timer');
    t.run();
    return t.ms;
  }
}

function failure(problem: Partial<Problem> & { status: number }) {
  const full: Problem = { type: 't', title: 'T', detail: 'd', instance: 'r', error_code: 2000, error_category: 'validation', retryable: false, retry_after: null, ...problem };
  return new TRPCClientError<AppRouter>(full.detail, { result: { error: { code: -32600, message: full.detail, data: { code: 'BAD_REQUEST', httpStatus: full.status, path: 'events.subscribe', problem: full } } } });
}

function feed() {
  const server = new FakeServer();
  const timers = new FakeTimers();
  const events: LiveEvent[] = [];
  const fresh: string[][] = [];
  const states: FeedState[] = [];
  const stop = followEvents({
    channels: ['approvals', 'users'],
    subscribe: server.subscribe,
    onEvent: (e) => events.push(e),
    onFresh: (channels) => fresh.push([...channels]),
    onState: (s) => states.push(s),
    timers,
  });
  return { server, timers, events, fresh, states, stop };
}

const created = (title: string): LiveEvent => ({ ...base, type: 'approval.created', channel: 'approvals', data: { ...approval, title } });

describe('followEvents: one subscription kept going', () => {
  it('subscribes to the channels, re-reads them once the stream is open, then hands on each event', () => {
    const f = feed();
    expect(f.server.last.input).toEqual({ channels: ['approvals', 'users'] });
    expect(f.states).toEqual(['connecting']);
    f.server.last.callbacks.onStarted();
    expect(f.states.at(-1)).toBe('live');
    expect(f.fresh).toEqual([['approvals', 'users']]);
    f.server.send('41', created('one'));
    expect(f.events.map((e) => e.type)).toEqual(['approval.created']);
    // The link's own reconnect after an event resumes from its id: nothing to re-read.
    f.server.last.callbacks.onReconnecting();
    expect(f.states.at(-1)).toBe('reconnecting');
    f.server.last.callbacks.onStarted();
    expect(f.fresh).toHaveLength(1);
  });

  it('after an error without an answer it subscribes again after a growing pause, resuming after the last id', () => {
    const f = feed();
    f.server.last.callbacks.onStarted();
    f.server.send('41', created('one'));
    const pauses: number[] = [];
    for (let i = 0; i < 7; i++) {
      f.server.last.callbacks.onError(new TypeError('network'));
      expect(f.states.at(-1)).toBe('reconnecting');
      pauses.push(f.timers.fire());
      expect(f.server.last.input).toEqual({ channels: ['approvals', 'users'], lastEventId: '41' });
    }
    expect(pauses).toEqual([RETRY_FIRST_MS, 2000, 4000, 8000, 16_000, RETRY_MAX_MS, RETRY_MAX_MS]);
    f.server.last.callbacks.onStarted();
    expect(f.fresh).toHaveLength(1);
    // Once open again, the next failure starts from the first pause.
    f.server.last.callbacks.onError(new TypeError('network'));
    expect(f.timers.fire()).toBe(RETRY_FIRST_MS);
  });

  it('at the stream cap (429) it waits at least as long as retry_after says', () => {
    const f = feed();
    f.server.last.callbacks.onError(failure({ status: 429, error_code: 5002, retryable: true, retry_after: 5 }));
    expect(f.timers.fire()).toBe(5000);
    expect(f.server.subscriptions).toHaveLength(2);
  });

  it('when its position is no longer retained (409) it starts over at once and re-reads the channels', () => {
    const f = feed();
    f.server.last.callbacks.onStarted();
    f.server.send('41', created('one'));
    f.server.last.callbacks.onError(new TypeError('network'));
    f.timers.fire();
    f.server.last.callbacks.onError(failure({ status: 409, error_code: 4000 }));
    expect(f.server.last.input).toEqual({ channels: ['approvals', 'users'] });
    f.server.last.callbacks.onStarted();
    expect(f.fresh).toHaveLength(2);
  });

  it('stops for good when the session is gone (401) or following is not allowed (403)', () => {
    for (const status of [401, 403]) {
      const f = feed();
      f.server.last.callbacks.onStarted();
      f.server.last.callbacks.onError(failure({ status, error_code: status === 401 ? 1002 : 1001 }));
      expect(f.states.at(-1)).toBe('off');
      expect(f.timers.pending).toEqual([]);
      expect(f.server.subscriptions).toHaveLength(1);
    }
  });

  it('a stream the server ended quietly is followed again; stop() unsubscribes and cancels a pending retry', () => {
    const f = feed();
    f.server.last.callbacks.onComplete();
    expect(f.timers.pending).toHaveLength(1);
    f.stop();
    expect(f.timers.pending).toEqual([]);
    const g = feed();
    g.stop();
    expect(g.server.last.open).toBe(false);
    // What a stopped subscription reports afterwards changes nothing.
    g.server.last.callbacks.onComplete();
    expect(g.timers.pending).toEqual([]);
  });
});
