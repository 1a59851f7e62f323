// API keys (CONTRACT §3.5): the user's own keys, or every key for the CEO; creating one (its secret shown once, with a copy button) and revoking.
import { useInfiniteQuery, useQuery } from '@tanstack/preact-query';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { RouterInputs, RouterOutputs } from '../../../src/client/index.ts';
import type { Scope } from '../../../src/contracts/apiKeys.ts';
import { keys } from '../api/keys.ts';
import { queries } from '../api/queries.ts';
import { queryClient } from '../api/queryClient.ts';
import { trpc } from '../api/trpc.ts';
import { useSubmit } from '../api/useSubmit.ts';
import { validate } from '../api/validation.ts';
import { Badge, Failure, Field, FormActions, Loading, Notice, onSubmitted, PageTitle, TextInput } from '../components/ui.tsx';
import { expiryFor, expiryRange, keyState, SCOPE_CHOICES, SCOPE_TEXT, type KeyState } from '../lib/apiKeys.ts';
import { useNow } from '../lib/clock.ts';
import { dateTime } from '../lib/format.ts';
import type { FieldErrors } from '../lib/forms.ts';
import { isCeo } from '../lib/roles.ts';
import { Link, navigate } from '../router.ts';
import { copyOrSelect, type CopyOutcome } from '../lib/clipboard.ts';

type ApiKey = RouterOutputs['apiKeys']['list']['items'][number];
type CreatedKey = RouterOutputs['apiKeys']['create'];
type User = RouterOutputs['users']['list']['items'][number];
type Me = { id: string; username: string; role: string };

const refreshKeys = () => queryClient.invalidateQueries({ queryKey: keys.allApiKeys });

/** The CEO's filter, kept in the URL (`?user_id=`) so Back returns to the previous view; others see only their own keys anyway. */
function filterOf(search: string, ceo: boolean): string | null {
  const userId = new URLSearchParams(search).get('user_id');
  return ceo && userId !== null && userId !== '' ? userId : null;
}

export function ApiKeysPage({ me, search }: { me: Me; search: string }) {
  const ceo = isCeo(me.role);
  const userId = filterOf(search, ceo);
  const list = useInfiniteQuery(queries.apiKeys(userId));
  // The CEO names users in the filter, the list and the form; nobody else needs the users.
  const everyone = useQuery({ ...queries.everyone(), enabled: ceo });
  const users = everyone.data ?? [];
  const [said, setSaid] = useState<string | null>(null);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [formOpen, setFormOpen] = useState(false);
  const openButton = useRef<HTMLButtonElement>(null);
  const apiKeys = list.data?.pages.flatMap((p) => p.items) ?? [];
  const kindOf = (id: string) => users.find((u) => u.id === id)?.kind;
  return (
    <section>
      <PageTitle title="API keys">API keys</PageTitle>
      <p>
        A program acts as a user through an API key instead of a password, sending it as <code>Authorization: Bearer aok_…</code>. The key has its
        user's current role, narrowed to the scopes chosen here; it can never manage keys or accounts.
        {ceo ? ' Service accounts (users that are programs) act only through keys.' : ''}
      </p>
      {created ? (
        <NewSecret
          created={created}
          forSomeoneElse={created.user_id !== me.id}
          onDone={() => {
            setCreated(null);
            openButton.current?.focus();
          }}
        />
      ) : formOpen ? (
        <NewKey
          me={me}
          users={ceo ? users : null}
          initialUserId={userId ?? me.id}
          onCancel={() => setFormOpen(false)}
          onCreated={(key) => {
            setSaid(null);
            setFormOpen(false);
            setCreated(key);
          }}
        />
      ) : (
        <p>
          <button type="button" ref={openButton} onClick={() => setFormOpen(true)}>
            Create an API key…
          </button>
        </p>
      )}
      {ceo ? <UserFilter me={me} users={users} userId={userId} /> : null}
      <div aria-live="polite">{said ? <Notice>{said}</Notice> : null}</div>
      {list.isPending ? <Loading what="API keys" /> : null}
      <Failure error={list.error} />
      <Failure error={everyone.error} />
      {list.isSuccess && apiKeys.length === 0 ? <p class="empty">{userId === null && !ceo ? 'You have no API keys yet.' : 'No API keys here yet.'}</p> : null}
      <ul class="cards" aria-label="API keys">
        {apiKeys.map((k) => (
          <li key={k.id}>
            <KeyCard apiKey={k} showUser={ceo} service={kindOf(k.user_id) === 'service'} onSaid={setSaid} />
          </li>
        ))}
      </ul>
      {list.hasNextPage ? (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {list.isFetchingNextPage ? 'Loading…' : 'Show more'}
        </button>
      ) : null}
    </section>
  );
}

/** A select of users: the signed-in user first, then service accounts, then people (optionally "Everyone" on top). */
function UserSelect(props: { label: string; hint?: ComponentChildren; me: Me; users: readonly User[]; value: string; onValue: (id: string) => void; everyone?: boolean }) {
  const { me, users } = props;
  const byName = (a: User, b: User) => a.username.localeCompare(b.username);
  const services = users.filter((u) => u.kind === 'service').sort(byName);
  const people = users.filter((u) => u.kind !== 'service' && u.id !== me.id).sort(byName);
  return (
    <Field label={props.label} hint={props.hint}>
      {({ id, describedBy }) => (
        <select id={id} value={props.value} aria-describedby={describedBy} onChange={(e) => props.onValue(e.currentTarget.value)}>
          {props.everyone ? <option value="">Everyone</option> : null}
          <option value={me.id}>{me.username} (you)</option>
          {services.length > 0 ? (
            <optgroup label="Service accounts">
              {services.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.username}
                </option>
              ))}
            </optgroup>
          ) : null}
          {people.length > 0 ? (
            <optgroup label="People">
              {people.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.username}
                </option>
              ))}
            </optgroup>
          ) : null}
        </select>
      )}
    </Field>
  );
}

function UserFilter({ me, users, userId }: { me: Me; users: readonly User[]; userId: string | null }) {
  return (
    <div class="filters key-filter" role="search" aria-label="Filter API keys">
      <UserSelect
        label="Whose keys"
        me={me}
        users={users}
        value={userId ?? ''}
        everyone
        onValue={(id) => navigate(id === '' ? '/api-keys' : `/api-keys?${new URLSearchParams({ user_id: id }).toString()}`)}
      />
    </div>
  );
}

type NewKeyProps = { me: Me; users: readonly User[] | null; initialUserId: string; onCancel: () => void; onCreated: (key: CreatedKey) => void };

function NewKey({ me, users, initialUserId, onCancel, onCreated }: NewKeyProps) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<readonly Scope[]>([]);
  const [day, setDay] = useState('');
  const [userId, setUserId] = useState(initialUserId);
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useSubmit({
    mutationFn: (input: RouterInputs['apiKeys']['create']) => trpc.apiKeys.create.mutate(input),
    // The answer holds the secret: no cache keeps it once this form is gone.
    gcTime: 0,
    onSuccess: async (key) => {
      onCreated(key);
      await refreshKeys();
    },
  });
  const range = expiryRange(new Date());
  const toggle = (scope: Scope, on: boolean) => setScopes(SCOPE_CHOICES.filter((s) => (s === scope ? on : scopes.includes(s))));
  const scopesHint = 'scopes-hint';
  const scopesError = errors.scopes ? 'scopes-error' : undefined;
  return (
    <form
      class="panel"
      aria-label="Create an API key"
      noValidate
      onSubmit={onSubmitted(async () => {
        const expiry = expiryFor(day, new Date());
        const input = { name, scopes: [...scopes], expires_at: expiry.ok ? expiry.expiresAt : null, ...(userId === me.id ? {} : { user_id: userId }) };
        const checked = await validate((s) => s.CreateApiKeyInput, input);
        const found: FieldErrors = checked.ok ? {} : { ...checked.errors };
        if (scopes.length === 0) found.scopes = 'Choose at least one scope.';
        if (!expiry.ok) found.expires_at = expiry.error;
        setErrors(found);
        if (checked.ok && Object.keys(found).length === 0) create.submit(checked.data);
      })}
    >
      <h2>Create an API key</h2>
      {users ? (
        <UserSelect
          label="Key for"
          hint="The key acts as this user, with the user's current role. Service accounts act only through keys."
          me={me}
          users={users}
          value={userId}
          onValue={setUserId}
        />
      ) : null}
      <TextInput label="Name" value={name} onValue={setName} error={errors.name} hint="What the key is for, e.g. the nightly deploy job." autoComplete="off" maxLength={100} required />
      <fieldset aria-describedby={[scopesHint, scopesError].filter(Boolean).join(' ')}>
        <legend>Scopes</legend>
        <p class="hint" id={scopesHint}>
          What the key may do, at most what its user's role allows. Choose only what the program needs.
        </p>
        <div class="scope-choices">
          {SCOPE_CHOICES.map((s) => (
            <label key={s} class="checkbox scope-choice">
              <input type="checkbox" checked={scopes.includes(s)} onChange={(e) => toggle(s, e.currentTarget.checked)} />
              <span>
                <code>{s}</code>
                <span class="scope-text">{SCOPE_TEXT[s]}</span>
              </span>
            </label>
          ))}
        </div>
        {scopesError ? (
          <p class="field-error" id={scopesError}>
            {errors.scopes}
          </p>
        ) : null}
      </fieldset>
      <TextInput
        label="Expires after (optional)"
        type="date"
        value={day}
        onValue={setDay}
        min={range.min}
        max={range.max}
        error={errors.expires_at}
        hint="The key works through this day and stops at midnight, your time; at most a year ahead. Empty: it never expires."
      />
      <Failure error={create.error} />
      <FormActions pending={create.isPending} pendingText="Creating…" onCancel={onCancel}>
        Create key
      </FormActions>
    </form>
  );
}

/** The new key's secret, shown this once: copy it, then it is gone from the page (the service keeps only a hash). */
function NewSecret({ created, forSomeoneElse, onDone }: { created: CreatedKey; forSomeoneElse: boolean; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const secretRef = useRef<HTMLElement>(null);
  const [copy, setCopy] = useState<CopyOutcome | null>(null);
  useEffect(() => heading.current?.focus(), []);
  const copySecret = async () => setCopy(await copyOrSelect(created.secret, secretRef.current));
  return (
    <section class="panel secret-panel" aria-labelledby="new-key-heading">
      <h2 id="new-key-heading" ref={heading} tabIndex={-1}>
        API key “{created.name}” created{forSomeoneElse ? ` for ${created.username}` : ''}
      </h2>
      <p class="secret-warning">
        <strong>Copy it now: you will not see this key again.</strong> The service keeps only a hash of it. If it is lost, revoke it and create
        another.
      </p>
      <p class="secret">
        <code id="new-key-secret" ref={secretRef}>
          {created.secret}
        </code>
      </p>
      <div class="actions">
        <button type="button" class="primary" onClick={() => void copySecret()}>
          Copy the key
        </button>
        <button type="button" onClick={onDone}>
          Done, hide the key
        </button>
      </div>
      <div aria-live="polite" class="copy-result">
        {copy === 'copied' ? <p>Copied to the clipboard.</p> : null}
        {copy === 'failed' ? <p>The clipboard is not available here: the key is selected, copy it with Ctrl+C (⌘C on a Mac).</p> : null}
      </div>
    </section>
  );
}

const STATE_BADGE: Record<KeyState, { kind: string; text: string }> = {
  active: { kind: 'ok', text: 'Active' },
  expired: { kind: 'pending', text: 'Expired' },
  revoked: { kind: 'bad', text: 'Revoked' },
};

function KeyCard({ apiKey: k, showUser, service, onSaid }: { apiKey: ApiKey; showUser: boolean; service: boolean; onSaid: (text: string) => void }) {
  const now = useNow(60_000);
  const state = keyState(k, now);
  const badge = STATE_BADGE[state];
  return (
    <article class="card" aria-labelledby={`key-${k.id}`}>
      <header class="card-head">
        <h2 id={`key-${k.id}`}>{k.name}</h2>
        <div class="badges">
          <Badge kind={badge.kind}>{badge.text}</Badge>
        </div>
      </header>
      <dl class="facts">
        {showUser ? (
          <div>
            <dt>User</dt>
            <dd>
              <Link href={`/api-keys?${new URLSearchParams({ user_id: k.user_id }).toString()}`} aria-label={`${k.username}: show only their keys`}>
                {k.username}
              </Link>{' '}
              {service ? <Badge kind="service">Service account</Badge> : null}
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Prefix</dt>
          <dd>
            <code>{k.prefix}…</code>
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            {dateTime(k.created_at)} <span class="by">by {k.created_by}</span>
          </dd>
        </div>
        <div>
          <dt>Expires</dt>
          <dd>{k.expires_at === null ? 'Never' : dateTime(k.expires_at)}</dd>
        </div>
        <div>
          <dt>Last used</dt>
          <dd>{k.last_used_at === null ? 'Never' : dateTime(k.last_used_at)}</dd>
        </div>
        {k.revoked_at !== null ? (
          <div>
            <dt>Revoked</dt>
            <dd>{dateTime(k.revoked_at)}</dd>
          </div>
        ) : null}
        <div class="wide">
          <dt>Scopes</dt>
          <dd>
            <ul class="chips scopes" aria-label={`Scopes of ${k.name}`}>
              {k.scopes.map((s) => (
                <li key={s} class="chip" title={SCOPE_TEXT[s]}>
                  <code>{s}</code>
                </li>
              ))}
            </ul>
          </dd>
        </div>
      </dl>
      {state === 'active' ? <Revoke apiKey={k} onSaid={onSaid} /> : null}
    </article>
  );
}

function Revoke({ apiKey: k, onSaid }: { apiKey: ApiKey; onSaid: (text: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  const revoke = useSubmit({
    mutationFn: () => trpc.apiKeys.revoke.mutate({ key_id: k.id }),
    onSuccess: async () => {
      onSaid(`API key “${k.name}” revoked. Requests made with it are refused from now on.`);
      await refreshKeys();
    },
  });
  return (
    <div class="manage">
      {confirming ? (
        <div class="confirm" role="group" aria-label={`Confirm revoking ${k.name}`}>
          <p>Revoke “{k.name}”? Every program using it is refused at once. This cannot be undone.</p>
          <div class="actions">
            <button type="button" class="danger" onClick={() => revoke.submit()} disabled={revoke.isPending}>
              {revoke.isPending ? 'Revoking…' : 'Revoke the key'}
            </button>
            <button type="button" onClick={() => setConfirming(false)} disabled={revoke.isPending}>
              Keep it
            </button>
          </div>
        </div>
      ) : (
        <button type="button" class="danger-outline" onClick={() => setConfirming(true)}>
          Revoke…
        </button>
      )}
      <Failure error={revoke.error} />
    </div>
  );
}
