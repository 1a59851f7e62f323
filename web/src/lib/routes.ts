// The dashboard's pages and the one function that decides which page a location shows, given who is signed in.
export type PageName =
  | 'first-run'
  | 'login'
  | 'change-password'
  | 'setup'
  | 'approvals'
  | 'reviews'
  | 'review'
  | 'users'
  | 'sessions'
  | 'api-keys'
  | 'audit'
  | 'webhooks'
  | 'security'
  | 'status'
  | 'not-found';

const ROUTES: ReadonlyArray<readonly [pattern: string, page: PageName]> = [
  ['/first-run', 'first-run'],
  ['/login', 'login'],
  ['/change-password', 'change-password'],
  ['/setup', 'setup'],
  ['/approvals', 'approvals'],
  ['/reviews', 'reviews'],
  ['/reviews/:taskId', 'review'],
  ['/users', 'users'],
  ['/sessions', 'sessions'],
  ['/api-keys', 'api-keys'],
  ['/audit', 'audit'],
  ['/webhooks', 'webhooks'],
  ['/security', 'security'],
  ['/status', 'status'],
];

export type Params = Record<string, string>;

/** `/reviews/:taskId` against `/reviews/t-1` → `{ taskId: 't-1' }`; null when the path does not fit. */
export function matchPattern(pattern: string, path: string): Params | null {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Params = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? '';
    const g = got[i] ?? '';
    if (w.startsWith(':')) {
      if (g === '') return null;
      try {
        params[w.slice(1)] = decodeURIComponent(g);
      } catch {
        return null;
      }
    } else if (w !== g) return null;
  }
  return params;
}

export function matchRoute(path: string): { page: PageName; params: Params } {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  for (const [pattern, page] of ROUTES) {
    const params = matchPattern(pattern, trimmed);
    if (params) return { page, params };
  }
  return { page: 'not-found', params: {} };
}

export type SetupState = { needs_admin: boolean; needs_setup: boolean };
export type SignedIn = {
  username: string;
  role: string;
  must_change_password: boolean;
  /** The role requires two-factor authentication and it is not on yet (CONTRACT §3.6): only enrolling is open. */
  mfa_enrollment_due?: boolean;
};

export type Resolution = { kind: 'loading' } | { kind: 'redirect'; to: string } | { kind: 'page'; page: PageName; params: Params };

/** Where a signed-in user starts: the wizard while the CEO still has it to finish, else the approvals queue. */
export function homeFor(me: SignedIn, setup: SetupState): string {
  return me.role === 'ceo' && setup.needs_setup ? '/setup' : '/approvals';
}

/**
 * Where a `next` target leads when it stays on the dashboard's own origin (CONTRACT §3.7): its path, query
 * and fragment; else null. It is resolved as the browser would resolve it, not checked by its spelling: a
 * browser drops tabs and newlines from a URL and reads `\\` as `/`, so `/\t/evil.example` is
 * `//evil.example`, another site.
 */
export function safeNext(next: string | null, origin: string): string | null {
  if (next === null || next === '') return null;
  let url: URL;
  try {
    url = new URL(next, origin);
  } catch {
    return null;
  }
  return url.origin === origin ? `${url.pathname}${url.search}${url.hash}` : null;
}

/**
 * The page for `path`, or where to go instead. `setup` is unknown while loading; `me` is undefined while
 * loading and null when nobody is signed in; `origin` is the dashboard's own (a `next` target must stay on it).
 */
export function resolve(path: string, search: string, setup: SetupState | undefined, me: SignedIn | null | undefined, origin: string): Resolution {
  const { page, params } = matchRoute(path);
  if (!setup) return { kind: 'loading' };
  if (setup.needs_admin) return page === 'first-run' ? { kind: 'page', page, params } : { kind: 'redirect', to: '/first-run' };
  if (page === 'first-run') return { kind: 'redirect', to: '/login' };
  if (me === undefined) return { kind: 'loading' };
  if (me === null) {
    if (page === 'login') return { kind: 'page', page, params };
    const here = `${path}${search}`;
    return { kind: 'redirect', to: here === '/' ? '/login' : `/login?${new URLSearchParams({ next: here }).toString()}` };
  }
  if (page === 'login') return { kind: 'redirect', to: safeNext(new URLSearchParams(search).get('next'), origin) ?? homeFor(me, setup) };
  if (me.must_change_password && page !== 'change-password') return { kind: 'redirect', to: '/change-password' };
  if (me.mfa_enrollment_due && page !== 'security') return { kind: 'redirect', to: '/security' };
  if (path === '/') return { kind: 'redirect', to: homeFor(me, setup) };
  return { kind: 'page', page, params };
}
