// The names of the session cookies (CONTRACT §3.2): read by each transport, written by the auth router.
export const COOKIE_NAMES = { session: 'session', csrf: 'csrf_token', refresh: 'refresh_token' } as const;
