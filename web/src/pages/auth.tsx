// First-run setup (creates the CEO), sign-in, and the password change a new user must make first.
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { useSubmit } from '../api/useSubmit.ts';
import { invalidateChannel, keys } from '../api/keys.ts';
import { queries } from '../api/queries.ts';
import { queryClient } from '../api/queryClient.ts';
import { validate } from '../api/validation.ts';
import { takeSessionNotice, trpc } from '../api/trpc.ts';
import { Failure, Notice, onSubmitted, PageTitle, Submit, TextInput } from '../components/ui.tsx';
import type { FieldErrors } from '../lib/forms.ts';
import { passwordPolicy } from '../lib/passwords.ts';
import { safeNext } from '../lib/routes.ts';
import { navigate } from '../router.ts';

function passwordsMatch(password: string, confirm: string, errors: FieldErrors): FieldErrors {
  return password === confirm || errors.confirm ? errors : { ...errors, confirm: 'The two passwords differ.' };
}

export function FirstRunPage() {
  const status = useQuery(queries.setupStatus());
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const setup = useSubmit({
    mutationFn: (input: { username: string; password: string }) => trpc.auth.setup.mutate(input),
    onSuccess: async (session) => {
      queryClient.setQueryData(keys.me, session.user);
      await invalidateChannel('setup');
      navigate('/setup');
    },
  });
  const min = status.data?.min_password_length ?? 12;
  return (
    <section class="narrow">
      <PageTitle title="First-run setup">Welcome to agent-org</PageTitle>
      <p>Nobody administers this organization yet. Create the CEO account: it runs the setup wizard and manages users.</p>
      <form
        noValidate
        onSubmit={onSubmitted(async () => {
          const input = { username, password };
          const checked = await validate((s) => s.SetupRequest, input);
          const found = passwordsMatch(password, confirm, checked.ok ? {} : checked.errors);
          setErrors(found);
          if (Object.keys(found).length === 0) setup.submit(input);
        })}
      >
        <TextInput label="Username" value={username} onValue={setUsername} error={errors.username} autoComplete="username" required />
        <TextInput
          label="Password"
          type="password"
          value={password}
          onValue={setPassword}
          error={errors.password}
          hint={passwordPolicy('your', min)}
          autoComplete="new-password"
          required
        />
        <TextInput label="Repeat the password" type="password" value={confirm} onValue={setConfirm} error={errors.confirm} autoComplete="new-password" required />
        <Failure error={setup.error} />
        <Submit pending={setup.isPending} pendingText="Creating the CEO…">
          Create the CEO account
        </Submit>
      </form>
    </section>
  );
}

export function LoginPage({ search }: { search: string }) {
  const [notice] = useState(takeSessionNotice);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const login = useSubmit({
    mutationFn: (input: { username: string; password: string }) => trpc.auth.login.mutate(input),
    onSuccess: (session) => {
      queryClient.setQueryData(keys.me, session.user);
      // The router takes it from here: a pending password change, else `next`, else home.
      const next = safeNext(new URLSearchParams(search).get('next'), window.location.origin);
      navigate(session.must_change_password ? '/change-password' : (next ?? '/'), { replace: true });
    },
  });
  return (
    <section class="narrow">
      <PageTitle title="Sign in">Sign in</PageTitle>
      {notice ? <Notice>{notice}</Notice> : null}
      <form
        noValidate
        onSubmit={onSubmitted(async () => {
          const input = { username, password };
          const checked = await validate((s) => s.LoginRequest, input);
          setErrors(checked.ok ? {} : checked.errors);
          if (checked.ok) login.submit(input);
        })}
      >
        <TextInput label="Username" value={username} onValue={setUsername} error={errors.username} autoComplete="username" required />
        <TextInput label="Password" type="password" value={password} onValue={setPassword} error={errors.password} autoComplete="current-password" required />
        <Failure error={login.error} />
        <Submit pending={login.isPending} pendingText="Signing in…">
          Sign in
        </Submit>
      </form>
    </section>
  );
}

export function ChangePasswordPage({ forced }: { forced: boolean }) {
  const status = useQuery(queries.setupStatus());
  const min = status.data?.min_password_length ?? 12;
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [done, setDone] = useState(false);
  const change = useSubmit({
    mutationFn: (input: { current_password: string; new_password: string }) => trpc.auth.changePassword.mutate(input),
    onSuccess: async (user) => {
      queryClient.setQueryData(keys.me, user);
      // Every other session of this user was just ended.
      await invalidateChannel('sessions');
      if (forced) navigate('/', { replace: true });
      else setDone(true);
    },
  });
  return (
    <section class="narrow">
      <PageTitle title="Change password">{forced ? 'Choose your own password' : 'Change password'}</PageTitle>
      {forced ? <p>Your account was created with an initial password. Choose your own before you continue.</p> : null}
      {done ? <Notice>Password changed. Your other sessions have been signed out.</Notice> : null}
      <form
        noValidate
        onSubmit={onSubmitted(async () => {
          const input = { current_password: current, new_password: next };
          const checked = await validate((s) => s.ChangePasswordRequest, input);
          const found = passwordsMatch(next, confirm, checked.ok ? {} : checked.errors);
          setErrors(found);
          if (Object.keys(found).length === 0) change.submit(input);
        })}
      >
        <TextInput
          label="Current password"
          type="password"
          value={current}
          onValue={setCurrent}
          error={errors.current_password}
          autoComplete="current-password"
          required
        />
        <TextInput
          label="New password"
          type="password"
          value={next}
          onValue={setNext}
          error={errors.new_password}
          hint={`${passwordPolicy('your', min)} Different from the current one.`}
          autoComplete="new-password"
          required
        />
        <TextInput label="Repeat the new password" type="password" value={confirm} onValue={setConfirm} error={errors.confirm} autoComplete="new-password" required />
        <Failure error={change.error} />
        <Submit pending={change.isPending} pendingText="Saving…">
          Change password
        </Submit>
      </form>
    </section>
  );
}
