// Who may receive which event, decided per event (not per connection), and how events change the viewer.
import { ROLES, type Role } from '../contracts/roles.ts';
import type { Channel } from '../contracts/events.ts';
import type { Scope } from '../contracts/apiKeys.ts';
import type { HubEvent } from './hub.ts';

/**
 * What the authorization of one stream rests on; kept current by the events themselves and by the session sweep.
 * A stream acts as a session, or (CONTRACT §3.5) as an API key: then `sessionId` is null and the key's scopes
 * narrow what it receives.
 */
export type Viewer = {
  userId: string;
  sessionId: string | null;
  apiKey: { id: string; scopes: readonly Scope[] } | null;
  role: Role;
  mustChangePassword: boolean;
  deleted: boolean;
};

/**
 * Roles that may receive each channel: those that may read the resources behind it (CONTRACT §3.1: every
 * GET of users, setup, approvals and reviews is open to any authenticated user). A table, so that a
 * narrower channel is one line.
 */
const READERS: Readonly<Record<Channel, readonly Role[]>> = {
  approvals: ROLES,
  reviews: ROLES,
  users: ROLES,
  setup: ROLES,
  sessions: ROLES,
};

/**
 * The scope a key needs for each channel: the one that reads the resources behind it, so a key's stream shows
 * no more than its requests could read (CONTRACT §3.5). The private `sessions` channel is about sessions, which
 * a key has none of: no key receives it.
 */
const KEY_SCOPES: Readonly<Record<Channel, Scope | null>> = {
  approvals: 'approvals:read',
  reviews: 'reviews:read',
  users: 'users:read',
  setup: 'setup:read',
  sessions: null,
};

export function mayReceive(viewer: Viewer, event: HubEvent): boolean {
  if (event.audienceUserId !== null) return viewer.apiKey === null && event.audienceUserId === viewer.userId;
  // A deleted user may read nothing; nor may a session that must change the password first (CONTRACT §3.1: that
  // gate concerns sessions, not keys).
  if (viewer.deleted) return false;
  if (viewer.apiKey === null ? viewer.mustChangePassword : !keyReads(viewer.apiKey.scopes, event.channel)) return false;
  return READERS[event.channel].includes(viewer.role);
}

function keyReads(scopes: readonly Scope[], channel: Channel): boolean {
  const scope = KEY_SCOPES[channel];
  return scope !== null && scopes.includes(scope);
}

/** The viewer after `event`: a role change or deletion of the viewer's own user applies from the next event. */
export function viewerAfter(viewer: Viewer, event: HubEvent): Viewer {
  const { event: live } = event;
  if (live.type === 'user.updated' && live.data.id === viewer.userId) {
    return { ...viewer, role: live.data.role, mustChangePassword: live.data.must_change_password };
  }
  if (live.type === 'user.deleted' && live.data.id === viewer.userId) return { ...viewer, deleted: true };
  return viewer;
}

/** True when `event` ends the viewer's own session (then it is delivered, and the stream closes). */
export function endsSession(viewer: Viewer, event: HubEvent): boolean {
  const { event: live } = event;
  return live.type === 'session.revoked' && viewer.sessionId !== null && event.audienceUserId === viewer.userId && live.data.session_id === viewer.sessionId;
}
