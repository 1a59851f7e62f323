// The frame of every signed-in page: skip link, navigation, whether changes arrive live, who is signed in, sign out.
import type { ComponentChildren } from 'preact';
import type { FeedState } from '../api/liveEvents.ts';
import { useSubmit } from '../api/useSubmit.ts';
import { signedOut, trpc } from '../api/trpc.ts';
import { label } from '../lib/format.ts';
import { Link, navigate, useLocation } from '../router.ts';

type Me = { username: string; role: string };

const NAV: ReadonlyArray<{ href: string; text: string; ceoOnly?: boolean; roles?: readonly string[] }> = [
  { href: '/approvals', text: 'Approvals' },
  { href: '/reviews', text: 'Reviews' },
  { href: '/users', text: 'Users' },
  { href: '/api-keys', text: 'API keys' },
  { href: '/setup', text: 'Setup', ceoOnly: true },
  { href: '/audit', text: 'Audit', roles: ['ceo', 'board_member'] },
  { href: '/webhooks', text: 'Webhooks', ceoOnly: true },
  { href: '/sessions', text: 'Sessions' },
  { href: '/security', text: 'Security' },
  { href: '/status', text: 'Status' },
];

const LIVE: Record<Exclude<FeedState, 'off'>, { text: string; title: string }> = {
  connecting: { text: 'Connecting…', title: 'Connecting to live updates' },
  live: { text: 'Live', title: 'Changes made elsewhere appear here as they happen' },
  reconnecting: { text: 'Reconnecting…', title: 'Live updates are interrupted; changes made meanwhile will follow' },
};

export function Layout({ me, live = null, children }: { me: Me | null; live?: FeedState | null; children: ComponentChildren }) {
  const { path } = useLocation();
  const logout = useSubmit({
    mutationFn: () => trpc.auth.logout.mutate(),
    // Logout always ends the session here, even if the answer was lost: the cookies are the server's to clear.
    onSettled: () => {
      signedOut(null);
      navigate('/login', { replace: true });
    },
  });
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="top-inner">
          <span class="brand">agent-org</span>
          {me ? (
            <nav aria-label="Main">
              <ul>
                {NAV.filter((n) => (!n.ceoOnly || me.role === 'ceo') && (!n.roles || n.roles.includes(me.role))).map((n) => (
                  <li key={n.href}>
                    <Link href={n.href} aria-current={path === n.href || path.startsWith(`${n.href}/`) ? 'page' : undefined}>
                      {n.text}
                    </Link>
                  </li>
                ))}
              </ul>
            </nav>
          ) : null}
          {me ? (
            <div class="who">
              {live !== null && live !== 'off' ? (
                <span class={`live live-${live}`} title={LIVE[live].title}>
                  {LIVE[live].text}
                </span>
              ) : null}
              <span>
                <span class="who-name">{me.username}</span> <span class="who-role">({label(me.role)})</span>
              </span>
              <button type="button" class="link-button" onClick={() => logout.submit()} disabled={logout.isPending}>
                Sign out
              </button>
            </div>
          ) : null}
        </div>
      </header>
      <main id="main" class="content">
        {children}
      </main>
    </>
  );
}
