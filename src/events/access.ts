// Who may receive which event, decided per event (not per connection), and how events change the viewer.
import { ROLES, type Role } from '../contracts/roles.ts';
import type { Channel } from '../contracts/events.ts';
import type { HubEvent } from './hub.ts';

/** What the authorization of one stream rests on; kept current by the events themselves and by the session sweep. */
export type Viewer = { userId: string; sessionId: string; role: Role; mustChangePassword: boolean; deleted: boolean };

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

export function mayReceive(viewer: Viewer, event: HubEvent): boolean {
  if (event.audienceUserId !== null) return event.audienceUserId === viewer.userId;
  // A deleted user, or one who must change the password first, may read nothing (CONTRACT §3.1).
  if (viewer.deleted || viewer.mustChangePassword) return false;
  return READERS[event.channel].includes(viewer.role);
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
  return live.type === 'session.revoked' && event.audienceUserId === viewer.userId && live.data.session_id === viewer.sessionId;
}
