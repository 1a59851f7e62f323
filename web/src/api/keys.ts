// Query keys, each rooted in the event channel (CONTRACT §4.8) whose events change that data.
import { queryClient } from './queryClient.ts';

/**
 * A query key starts with the channel that reports changes to its data, so one call refreshes everything a
 * change touches: mutations call `invalidateChannel` on success, and the live module (events.subscribe)
 * only has to call it for each event it receives.
 */
export type Channel = 'approvals' | 'reviews' | 'users' | 'setup' | 'sessions';

export const keys = {
  setupStatus: ['setup', 'status'],
  templates: ['setup', 'templates'],
  agents: ['setup', 'agents'],
  availableLocales: ['setup', 'available-locales'],
  locales: ['setup', 'locales'],
  presets: ['setup', 'presets'],
  me: ['users', 'me'],
  /** The caller's two-factor status (turned on or off is a `user.updated` event). */
  mfa: ['users', 'mfa'],
  users: ['users', 'list'],
  /** Every user at once, for the pickers (a prefix of `users` would refresh it; this one is below it). */
  everyone: ['users', 'list', 'everyone'],
  /**
   * API keys have no channel of their own (no event reports them); they sit under `users` because a user's
   * deletion revokes that user's keys. `null`: the caller's keys, or every key for the CEO.
   */
  apiKeys: (userId: string | null) => ['users', 'api-keys', userId] as const,
  allApiKeys: ['users', 'api-keys'],
  sessions: (scope: 'own' | 'all') => ['sessions', scope] as const,
  approvals: (filters: object) => ['approvals', 'list', filters] as const,
  stages: (taskId: string) => ['reviews', taskId] as const,
  // Not tied to a channel: probes change on their own and are read on demand.
  health: ['probes', 'health'],
  readiness: ['probes', 'readiness'],
  capabilities: ['probes', 'capabilities'],
} as const;

export function invalidateChannel(channel: Channel): Promise<void> {
  return queryClient.invalidateQueries({ queryKey: [channel] });
}
