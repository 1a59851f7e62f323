// First-run setup (creates the CEO), sign-in (with the one-time code once two-factor is on), and the password change a new user must make first.
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { useSubmit } from '../api/useSubmit.ts';
import { invalidateChannel, keys } from '../api/keys.ts';
import { queries } from '../api/queries.ts';
import { queryClient } from '../api/queryClient.ts';
import { validate } from '../api/validation.ts';
import { takeSessionNotice, trpc } from '../api/trpc.ts';
import { problemOf, type RouterOutputs } from '../../../src/client/index.ts';
import { Failure, Notice, onSubmitted, PageTitle, Submit, TextInput } from '../components/ui.tsx';
import type { FieldErrors } from '../lib/forms.ts';
import { passwordPolicy } from '../lib/passwords.ts';
import { safeNext } from '../lib/routes.ts';
import { navigate } from '../router.ts';

/**
 * A new session: who is signed in, and their two-factor status asked afresh (it decides whether the role
 * sends them to enroll first); the page waits for it rather than showing one it would then leave.
 */
function sessionStarted(user: RouterOutputs['auth']['me']): void {
  queryClient.setQueryData(keys.me, user);
  void queryClient.resetQueries({ queryKey: keys.mfa });
}

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
      sessionStarted(session.user);
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

/** The service's answer to a right password when two-factor authentication is on and no code came with it (CONTRACT §3.6). */
const CODE_REQUIRED = 'one-time code required';

type LoginInput = { username: string; password: string; otp?: string };

export function LoginPage({ search }: { search: string }) {
  const [notice] = useState(takeSessionNotice);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  // Set once the service asked for a code: the second step of the same form (username and password are kept).
  const [codeStep, setCodeStep] = useState<'totp' | 'recovery' | null>(null);
  const [code, setCode] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const login = useSubmit({
    mutationFn: (input: LoginInput) => trpc.auth.login.mutate(input),
    onSuccess: (session) => {
      sessionStarted(session.user);
      // The router takes it from here: a pending password change, else `next`, else home.
      const next = safeNext(new URLSearchParams(search).get('next'), window.location.origin);
      navigate(session.must_change_password ? '/change-password' : (next ?? '/'), { replace: true });
    },
    onError: (error) => {
      const problem = problemOf(error);
      if (problem?.status === 401 && problem.detail === CODE_REQUIRED) setCodeStep((step) => step ?? 'totp');
    },
  });
  // "One-time code required" is the question this step answers, not an error to show.
  const codeAsked = problemOf(login.error)?.detail === CODE_REQUIRED;
  const useRecovery = (recovery: boolean) => {
    setCodeStep(recovery ? 'recovery' : 'totp');
    setCode('');
    setErrors({});
    login.reset();
  };
  return (
    <section class="narrow">
      <PageTitle title="Sign in">Sign in</PageTitle>
      {notice ? <Notice>{notice}</Notice> : null}
      <form
        noValidate
        aria-label="Sign in"
        onSubmit={onSubmitted(async () => {
          const typed = code.trim();
          if (codeStep !== null && typed === '') {
            setErrors({ otp: codeStep === 'totp' ? 'Enter the 6-digit code from your authenticator app.' : 'Enter one of your recovery codes.' });
            return;
          }
          const input: LoginInput = codeStep === null ? { username, password } : { username, password, otp: typed };
          const checked = await validate((s) => s.LoginRequest, input);
          setErrors(checked.ok ? {} : checked.errors);
          if (checked.ok) login.submit(input);
        })}
      >
        {codeStep === null ? (
          <>
            <TextInput label="Username" value={username} onValue={setUsername} error={errors.username} autoComplete="username" required />
            <TextInput label="Password" type="password" value={password} onValue={setPassword} error={errors.password} autoComplete="current-password" required />
          </>
        ) : (
          <>
            <p>
              Two-factor authentication is on for <strong class="nowrap">{username}</strong>.{' '}
              {codeStep === 'totp' ? 'Enter the code your authenticator app shows now.' : 'Enter one of the recovery codes you saved; it can be used only once.'}
            </p>
            {codeStep === 'totp' ? (
              <TextInput
                key="totp"
                label="One-time code"
                value={code}
                onValue={setCode}
                error={errors.otp}
                autoComplete="one-time-code"
                inputMode="numeric"
                pattern="[0-9]*"
                maxLength={6}
                spellcheck={false}
                autoFocus
                required
              />
            ) : (
              <TextInput
                key="recovery"
                label="Recovery code"
                value={code}
                onValue={setCode}
                error={errors.otp}
                hint="Looks like xxxx-xxxx-xxxx-xxxx."
                autoComplete="off"
                autoCapitalize="none"
                spellcheck={false}
                autoFocus
                required
              />
            )}
          </>
        )}
        {codeAsked ? null : <Failure error={login.error} />}
        <Submit pending={login.isPending} pendingText="Signing in…">
          {codeStep === null ? 'Sign in' : 'Verify and sign in'}
        </Submit>
        {codeStep !== null ? (
          <div class="alt-actions">
            <button type="button" class="text-button" onClick={() => useRecovery(codeStep === 'totp')} disabled={login.isPending}>
              {codeStep === 'totp' ? 'Use a recovery code instead' : 'Use the authenticator app instead'}
            </button>
            <button
              type="button"
              class="text-button"
              disabled={login.isPending}
              onClick={() => {
                setCodeStep(null);
                setCode('');
                setPassword('');
                setErrors({});
                login.reset();
              }}
            >
              Sign in as someone else
            </button>
          </div>
        ) : null}
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
      sessionStarted(user);
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
