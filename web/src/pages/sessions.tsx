// The signed-in user's sessions (all users' for the CEO), each revocable.
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { useSubmit } from '../api/useSubmit.ts';
import { invalidateChannel } from '../api/keys.ts';
import { queries } from '../api/queries.ts';
import { trpc } from '../api/trpc.ts';
import { Badge, Failure, Loading, Notice, PageTitle } from '../components/ui.tsx';
import { dateTime } from '../lib/format.ts';
import { isCeo } from '../lib/roles.ts';
import { Link } from '../router.ts';

export function SessionsPage({ me }: { me: { role: string } }) {
  const [all, setAll] = useState(false);
  const scope = all && isCeo(me.role) ? 'all' : 'own';
  const sessions = useQuery(queries.sessions(scope));
  const [said, setSaid] = useState<string | null>(null);
  const revoke = useSubmit({
    mutationFn: (sessionId: string) => trpc.auth.revokeSession.mutate({ session_id: sessionId }),
    onSuccess: async () => {
      setSaid('Session revoked.');
      await invalidateChannel('sessions');
    },
  });
  return (
    <section>
      <PageTitle title="Sessions">Sessions</PageTitle>
      <p>
        Every browser or client signed in as you. Revoking one signs it out at once. <Link href="/change-password">Change your password</Link> to sign
        out everywhere else.
      </p>
      {isCeo(me.role) ? (
        <label class="checkbox">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} /> Show every user's sessions
        </label>
      ) : null}
      <div aria-live="polite">{said ? <Notice>{said}</Notice> : null}</div>
      <Failure error={revoke.error} />
      {sessions.isPending ? <Loading what="sessions" /> : null}
      <Failure error={sessions.error} />
      <ul class="cards" aria-label="Sessions">
        {sessions.data?.map((s) => (
          <li key={s.session_id} class="card">
            <header class="card-head">
              <h2>{s.user_agent ?? 'Unknown client'}</h2>
              <div class="badges">{s.is_current ? <Badge kind="current">This session</Badge> : null}</div>
            </header>
            <dl class="facts">
              {scope === 'all' ? (
                <div>
                  <dt>User</dt>
                  <dd>{s.username}</dd>
                </div>
              ) : null}
              <div>
                <dt>Address</dt>
                <dd>{s.ip_address ?? 'unknown'}</dd>
              </div>
              <div>
                <dt>Signed in</dt>
                <dd>{dateTime(s.created_at)}</dd>
              </div>
              <div>
                <dt>Last active</dt>
                <dd>{dateTime(s.last_active_at)}</dd>
              </div>
              <div>
                <dt>Expires</dt>
                <dd>{dateTime(s.expires_at)}</dd>
              </div>
            </dl>
            <button
              type="button"
              class="danger-outline"
              disabled={revoke.isPending}
              onClick={() => revoke.submit(s.session_id)}
              aria-label={s.is_current ? 'Revoke this session (signs you out)' : `Revoke the session of ${s.user_agent ?? 'an unknown client'} from ${dateTime(s.created_at)}`}
            >
              {s.is_current ? 'Revoke (sign out here)' : 'Revoke'}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
