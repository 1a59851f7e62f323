// Users and their organization roles; the CEO's actions (add, change role, delete, grant and revoke org roles) are shown to the CEO only.
import { useInfiniteQuery } from '@tanstack/preact-query';
import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import type { RouterInputs, RouterOutputs } from '../../../src/client/index.ts';
import { useCreateForm } from '../api/useCreateForm.ts';
import { useSubmit } from '../api/useSubmit.ts';
import { invalidateChannel } from '../api/keys.ts';
import { queries } from '../api/queries.ts';
import { validate } from '../api/validation.ts';
import { trpc } from '../api/trpc.ts';
import { Badge, Failure, FormActions, Loading, Notice, onSubmitted, OpenFormButton, PageTitle, Select, Submit, TextInput } from '../components/ui.tsx';
import type { FieldErrors } from '../lib/forms.ts';
import { dateTime, label } from '../lib/format.ts';
import { ORG_ROLES, ROLES } from '../lib/options.ts';
import { passwordPolicy } from '../lib/passwords.ts';
import { isCeo } from '../lib/roles.ts';
import { Link } from '../router.ts';

type User = RouterOutputs['users']['list']['items'][number];
type Me = { id: string; username: string; role: string };

// The CEO is made by first-run setup only (CONTRACT §4.3): no form offers the role.
const ASSIGNABLE_ROLES = ROLES.filter((r) => r !== 'ceo');

export function UsersPage({ me }: { me: Me }) {
  const list = useInfiniteQuery(queries.users());
  const [said, setSaid] = useState<ComponentChildren>(null);
  const users = list.data?.pages.flatMap((p) => p.items) ?? [];
  const ceo = isCeo(me.role);
  return (
    <section>
      <PageTitle title="Users">Users</PageTitle>
      {ceo ? <NewUser onCreated={(user) => setSaid(<Created user={user} />)} /> : null}
      <div aria-live="polite">{said ? <Notice>{said}</Notice> : null}</div>
      {list.isPending ? <Loading what="users" /> : null}
      <Failure error={list.error} />
      <ul class="cards" aria-label="Users">
        {users.map((u) => (
          <li key={u.id}>
            <UserCard user={u} me={me} ceo={ceo} onSaid={setSaid} />
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

/** What the page says after a user was added: a person chooses a password, a service account needs a key. */
function Created({ user }: { user: User }) {
  if (user.kind !== 'service') return <>User {user.username} created. They choose their own password at first sign-in.</>;
  return (
    <>
      Service account {user.username} created. It has no password:{' '}
      <Link href={`/api-keys?${new URLSearchParams({ user_id: user.id }).toString()}`}>issue it an API key</Link>.
    </>
  );
}

function UserCard({ user: u, me, ceo, onSaid }: { user: User; me: Me; ceo: boolean; onSaid: (text: string) => void }) {
  // Neither oneself nor the CEO can be re-roled or deleted (CONTRACT §4.3); the controls are not offered.
  const manageable = ceo && u.id !== me.id && u.role !== 'ceo';
  return (
    <article class="card" aria-labelledby={`user-${u.id}`}>
      <header class="card-head">
        <h2 id={`user-${u.id}`}>{u.username}</h2>
        <div class="badges">
          {u.kind === 'service' ? <Badge kind="service">Service account</Badge> : null}
          <Badge kind="role">{label(u.role)}</Badge>
          {u.must_change_password ? <Badge kind="pending">Must change password</Badge> : null}
          {u.mfa_enabled ? <Badge kind="ok">Two-factor on</Badge> : null}
        </div>
      </header>
      <p class="meta">
        Added {dateTime(u.created_at)}
        {ceo && u.kind === 'service' ? (
          <>
            {' · '}
            <Link href={`/api-keys?${new URLSearchParams({ user_id: u.id }).toString()}`}>API keys of {u.username}</Link>
          </>
        ) : null}
      </p>
      <OrgRoles user={u} ceo={ceo} onSaid={onSaid} />
      {manageable ? <RoleAndDelete user={u} onSaid={onSaid} /> : null}
      {ceo && u.mfa_enabled && u.id !== me.id ? <ResetMfa user={u} onSaid={onSaid} /> : null}
      {ceo ? <GrantOrgRole user={u} onSaid={onSaid} /> : null}
    </article>
  );
}

function OrgRoles({ user: u, ceo, onSaid }: { user: User; ceo: boolean; onSaid: (text: string) => void }) {
  const revoke = useSubmit({
    mutationFn: (input: RouterInputs['users']['revokeOrgRole']) => trpc.users.revokeOrgRole.mutate(input),
    onSuccess: async (_, input) => {
      onSaid(`Removed ${label(input.role)} from ${u.username}.`);
      await invalidateChannel('users');
    },
  });
  if (u.org_roles.length === 0) return <p class="meta">No organization roles.</p>;
  return (
    <div>
      <ul class="chips" aria-label={`Organization roles of ${u.username}`}>
        {u.org_roles.map((r) => (
          <li key={r} class="chip">
            {label(r)}
            {r === 'department_admin' && u.scoped_departments.length > 0 ? ` (${u.scoped_departments.join(', ')})` : ''}
            {ceo ? (
              <button
                type="button"
                class="chip-remove"
                aria-label={`Remove ${label(r)} from ${u.username}`}
                disabled={revoke.isPending}
                onClick={() => revoke.submit({ user_id: u.id, role: r })}
              >
                ×
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      <Failure error={revoke.error} />
    </div>
  );
}

function RoleAndDelete({ user: u, onSaid }: { user: User; onSaid: (text: string) => void }) {
  const [role, setRole] = useState<string>(u.role);
  const [confirming, setConfirming] = useState(false);
  const update = useSubmit({
    mutationFn: (input: RouterInputs['users']['updateRole']) => trpc.users.updateRole.mutate(input),
    onSuccess: async (updated) => {
      onSaid(`${updated.username} is now ${label(updated.role)}.`);
      await invalidateChannel('users');
    },
  });
  const remove = useSubmit({
    mutationFn: () => trpc.users.delete.mutate({ user_id: u.id }),
    onSuccess: async () => {
      onSaid(`User ${u.username} deleted; their sessions have ended.`);
      await invalidateChannel('users');
    },
  });
  const nextRole = ASSIGNABLE_ROLES.find((r) => r === role);
  return (
    <div class="manage">
      <form
        class="inline-form"
        noValidate
        onSubmit={onSubmitted(async () => {
          if (nextRole) update.submit({ user_id: u.id, role: nextRole });
        })}
      >
        <Select label={`Role of ${u.username}`} value={role} onValue={setRole} options={ASSIGNABLE_ROLES.map((r) => ({ value: r, label: label(r) }))} />
        <Submit pending={update.isPending} class="secondary" disabled={role === u.role} pendingText="Saving…">
          Change role
        </Submit>
      </form>
      <Failure error={update.error} />
      {confirming ? (
        <div class="confirm" role="group" aria-label={`Confirm deleting ${u.username}`}>
          <p>Delete {u.username}? Their sessions end and their API keys are revoked at once. This cannot be undone.</p>
          <div class="actions">
            <button type="button" class="danger" onClick={() => remove.submit()} disabled={remove.isPending}>
              {remove.isPending ? 'Deleting…' : `Delete ${u.username}`}
            </button>
            <button type="button" onClick={() => setConfirming(false)} disabled={remove.isPending}>
              Keep
            </button>
          </div>
        </div>
      ) : (
        <button type="button" class="danger-outline" onClick={() => setConfirming(true)}>
          Delete…
        </button>
      )}
      <Failure error={remove.error} />
    </div>
  );
}

/** The CEO turns off someone's two-factor authentication (a lost phone, CONTRACT §3.6); their own is on the security page. */
function ResetMfa({ user: u, onSaid }: { user: User; onSaid: (text: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  const reset = useSubmit({
    mutationFn: () => trpc.users.resetMfa.mutate({ user_id: u.id }),
    onSuccess: async () => {
      setConfirming(false);
      onSaid(`Two-factor authentication of ${u.username} is off: they sign in with their password alone and can set it up again.`);
      await invalidateChannel('users');
    },
  });
  return (
    <div class="manage">
      {confirming ? (
        <div class="confirm" role="group" aria-label={`Confirm resetting two-factor of ${u.username}`}>
          <p>
            Turn off two-factor authentication of {u.username}? Do this only when you are sure it is them asking (for example, a lost phone):
            their password alone will sign them in.
          </p>
          <div class="actions">
            <button type="button" class="danger" onClick={() => reset.submit()} disabled={reset.isPending}>
              {reset.isPending ? 'Resetting…' : `Reset two-factor of ${u.username}`}
            </button>
            <button type="button" onClick={() => setConfirming(false)} disabled={reset.isPending}>
              Keep it
            </button>
          </div>
        </div>
      ) : (
        <button type="button" class="danger-outline" onClick={() => setConfirming(true)}>
          Reset two-factor…
        </button>
      )}
      <Failure error={reset.error} />
    </div>
  );
}

function GrantOrgRole({ user: u, onSaid }: { user: User; onSaid: (text: string) => void }) {
  const [open, setOpen] = useState(false);
  const [role, setRole] = useState<string>('viewer');
  const [departments, setDepartments] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const grant = useSubmit({
    mutationFn: (input: RouterInputs['users']['grantOrgRole']) => trpc.users.grantOrgRole.mutate(input),
    onSuccess: async (_, input) => {
      setOpen(false);
      setDepartments('');
      onSaid(`${u.username} is now ${label(input.role)}.`);
      await invalidateChannel('users');
    },
  });
  if (!open) {
    return (
      <button type="button" class="secondary" onClick={() => setOpen(true)}>
        Grant organization role…
      </button>
    );
  }
  const scoped = role === 'department_admin';
  return (
    <form
      class="inline-form"
      noValidate
      onSubmit={onSubmitted(async () => {
        const list = departments
          .split(',')
          .map((d) => d.trim())
          .filter((d) => d !== '');
        const input = { user_id: u.id, role, scoped_departments: scoped ? list : null };
        const checked = await validate((s) => s.GrantOrgRoleInput, input);
        const found = checked.ok ? {} : checked.errors;
        if (checked.ok && scoped && list.length === 0) found.scoped_departments = 'A department admin needs at least one department.';
        setErrors(found);
        if (checked.ok && Object.keys(found).length === 0) grant.submit(checked.data);
      })}
    >
      <Select label="Organization role" value={role} onValue={setRole} options={ORG_ROLES.map((r) => ({ value: r, label: label(r) }))} error={errors.role} />
      {scoped ? (
        <TextInput label="Departments" value={departments} onValue={setDepartments} error={errors.scoped_departments} hint="Comma-separated, e.g. engineering, design" />
      ) : null}
      <Failure error={grant.error} />
      <div class="actions">
        <Submit pending={grant.isPending} pendingText="Granting…">
          Grant
        </Submit>
        <button type="button" onClick={() => setOpen(false)} disabled={grant.isPending}>
          Cancel
        </button>
      </div>
    </form>
  );
}

const EMPTY = { username: '', password: '', role: 'observer', kind: 'human' };

function NewUser({ onCreated }: { onCreated: (user: User) => void }) {
  const form = useCreateForm({
    empty: EMPTY,
    send: (input: RouterInputs['users']['create'], options) => trpc.users.create.mutate(input, options),
    channel: 'users',
    onCreated,
  });
  const { values: v, set, errors, submission: create } = form;
  const kindHint = useId();
  if (!form.open) return <OpenFormButton onOpen={() => form.setOpen(true)}>Add a user…</OpenFormButton>;
  // A service account is a program: it never has a password and acts only through API keys (CONTRACT §3.5).
  const service = v.kind === 'service';
  return (
    <form
      class="panel"
      aria-label="Add a user"
      noValidate
      onSubmit={onSubmitted(async () => {
        const input = service ? { username: v.username, role: v.role, kind: 'service' } : { username: v.username, password: v.password, role: v.role, kind: 'human' };
        const checked = await validate((s) => s.CreateUserInput, input);
        form.showErrors(checked);
        if (checked.ok) create.submit(checked.data);
      })}
    >
      <h2>Add a user</h2>
      <fieldset aria-describedby={kindHint}>
        <legend>Kind</legend>
        <div class="radios">
          <label class="radio">
            <input type="radio" name="kind" value="human" checked={!service} onChange={() => set('kind')('human')} /> Person
          </label>
          <label class="radio">
            <input type="radio" name="kind" value="service" checked={service} onChange={() => set('kind')('service')} /> Service account
          </label>
        </div>
        <p class="hint" id={kindHint}>
          {service ? 'A program: it has no password, cannot sign in, and acts only through API keys.' : 'Signs in with a password.'}
        </p>
      </fieldset>
      <TextInput label="Username" value={v.username} onValue={set('username')} error={errors.username} autoComplete="off" required />
      {service ? null : (
        <TextInput
          label="Initial password"
          type="password"
          value={v.password}
          onValue={set('password')}
          error={errors.password}
          hint={`${passwordPolicy('the')} The user must replace it at first sign-in.`}
          autoComplete="new-password"
          required
        />
      )}
      <Select label="Role" value={v.role} onValue={set('role')} options={ASSIGNABLE_ROLES.map((r) => ({ value: r, label: label(r) }))} error={errors.role} />
      <Failure error={create.error} />
      <FormActions pending={create.isPending} pendingText="Adding…" onCancel={() => form.setOpen(false)}>
        Add user
      </FormActions>
    </form>
  );
}
