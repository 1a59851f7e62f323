// The dashboard shell: reads setup status and the signed-in user, then shows the page the location resolves to.
import { QueryClientProvider, useQuery } from '@tanstack/preact-query';
import { useEffect } from 'preact/hooks';
import type { RouterOutputs } from '../../src/client/index.ts';
import { useLiveEvents } from './api/live.ts';
import { channelsFor } from './api/liveEvents.ts';
import { queries } from './api/queries.ts';
import { queryClient } from './api/queryClient.ts';
import { preloadApiSchemas } from './api/validation.ts';
import { Layout } from './components/Layout.tsx';
import { Failure, Loading, PageTitle } from './components/ui.tsx';
import { resolve, type PageName, type Params } from './lib/routes.ts';
import { ApiKeysPage } from './pages/apiKeys.tsx';
import { ApprovalsPage } from './pages/approvals.tsx';
import { AuditPage } from './pages/audit.tsx';
import { ChangePasswordPage, FirstRunPage, LoginPage } from './pages/auth.tsx';
import { ReviewPage, ReviewsPage } from './pages/reviews.tsx';
import { SecurityPage } from './pages/security.tsx';
import { SessionsPage } from './pages/sessions.tsx';
import { SetupPage } from './pages/setup.tsx';
import { StatusPage } from './pages/status.tsx';
import { UsersPage } from './pages/users.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { Link, navigate, useLocation } from './router.ts';

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <Shell />
    </QueryClientProvider>
  );
}

type Me = RouterOutputs['auth']['me'];

function Shell() {
  const { path, search } = useLocation();
  const status = useQuery(queries.setupStatus());
  // Asked together with the status (one batched request), not after it: the first page is one round trip sooner.
  const me = useQuery(queries.me());
  // In the same batch: whether the role requires two-factor authentication that is not on yet.
  const mfa = useQuery(queries.mfaStatus());
  const user = mfa.isPending ? undefined : me.data && { ...me.data, mfa_enrollment_due: mfa.data?.required === true && !mfa.data.totp_enabled };
  const where = resolve(path, search, status.data, user, window.location.origin);
  const signedIn = user && !user.must_change_password && !user.mfa_enrollment_due ? user : null;
  // Live updates for what the page shows; a user who must change the password first may follow nothing.
  const live = useLiveEvents(signedIn?.id ?? null, channelsFor(where.kind === 'page' ? where.page : 'not-found'));
  useEffect(() => {
    if (where.kind === 'redirect') navigate(where.to, { replace: true });
  }, [where.kind === 'redirect' ? where.to : null]);
  useEffect(() => {
    if (where.kind !== 'page' || performance.getEntriesByName('dashboard:interactive').length > 0) return;
    // For the first-load measurement (bench/dashboard.ts): the moment a page, not a spinner, is on screen.
    performance.mark('dashboard:interactive');
    preloadApiSchemas();
  }, [where.kind]);
  const failed = status.error ?? me.error;
  if (failed) {
    return (
      <Layout me={null}>
        <PageTitle title="Unavailable">The dashboard cannot load</PageTitle>
        <Failure error={failed} />
        <button type="button" onClick={() => void (status.error ? status.refetch() : me.refetch())}>
          Try again
        </button>
      </Layout>
    );
  }
  if (where.kind !== 'page') return <Loading what="the dashboard" />;
  return (
    <Layout me={me.data ?? null} live={signedIn ? live : null}>
      <Page page={where.page} params={where.params} search={search} me={me.data ?? null} />
    </Layout>
  );
}

function Page({ page, params, search, me }: { page: PageName; params: Params; search: string; me: Me | null }) {
  if (page === 'first-run') return <FirstRunPage />;
  if (page === 'login' || !me) return <LoginPage search={search} />;
  switch (page) {
    case 'change-password':
      return <ChangePasswordPage forced={me.must_change_password} />;
    case 'setup':
      return <SetupPage me={me} search={search} />;
    case 'approvals':
      return <ApprovalsPage me={me} search={search} />;
    case 'reviews':
      return <ReviewsPage />;
    case 'review':
      return <ReviewPage taskId={params.taskId ?? ''} me={me} />;
    case 'users':
      return <UsersPage me={me} />;
    case 'sessions':
      return <SessionsPage me={me} />;
    case 'api-keys':
      return <ApiKeysPage me={me} search={search} />;
    case 'audit':
      return <AuditPage me={me} search={search} />;
    case 'webhooks':
      return <WebhooksPage me={me} />;
    case 'security':
      return <SecurityPage />;
    case 'status':
      return <StatusPage />;
    case 'not-found':
      return (
        <section class="narrow">
          <PageTitle title="Not found">Page not found</PageTitle>
          <p>
            Nothing lives at <code>{window.location.pathname}</code>. Go to the <Link href="/approvals">approvals</Link>.
          </p>
        </section>
      );
  }
}
