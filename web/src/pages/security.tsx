// The signed-in user's two-factor authentication (CONTRACT §3.6): status, enrolling with a QR code drawn here,
// the recovery codes shown once (copy, download), new recovery codes, and turning it off.
import { useQuery } from '@tanstack/preact-query';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { RouterOutputs } from '../../../src/client/index.ts';
import { invalidateChannel, keys } from '../api/keys.ts';
import { queries } from '../api/queries.ts';
import { queryClient } from '../api/queryClient.ts';
import { trpc } from '../api/trpc.ts';
import { useSubmit } from '../api/useSubmit.ts';
import { Badge, Failure, FormActions, Loading, Notice, onSubmitted, OpenFormButton, PageTitle, Submit, TextInput } from '../components/ui.tsx';
import { drawQr, type QrDrawing } from '../lib/qr.ts';
import { copyOrSelect, type CopyOutcome } from '../lib/clipboard.ts';

type Enrollment = RouterOutputs['auth']['mfa']['enroll'];
type Status = NonNullable<RouterOutputs['auth']['mfa']['status']>;
type ShownCodes = { codes: readonly string[]; why: 'enabled' | 'regenerated' };

/** Two-factor was turned on or off, or codes were used: the status, `me.mfa_enabled` and the users list follow. */
const changed = () => invalidateChannel('users');

export function SecurityPage() {
  const status = useQuery(queries.mfaStatus());
  const [shown, setShown] = useState<ShownCodes | null>(null);
  const [said, setSaid] = useState<ComponentChildren>(null);
  const s = status.data;
  return (
    <section class="narrow">
      <PageTitle title="Security">Security</PageTitle>
      <div aria-live="polite">{said ? <Notice>{said}</Notice> : null}</div>
      {status.isPending ? <Loading what="your two-factor status" /> : null}
      <Failure error={status.error} />
      {s ? (
        <>
          <StatusPanel status={s} />
          {shown ? (
            <RecoveryCodes shown={shown} onDone={() => setShown(null)} />
          ) : s.totp_enabled ? (
            <>
              <Regenerate
                onCodes={(codes) => {
                  setSaid(null);
                  setShown({ codes, why: 'regenerated' });
                }}
              />
              <TurnOff onOff={() => setSaid('Two-factor authentication is off. Signing in needs only your password now.')} />
            </>
          ) : (
            <Enroll
              onEnabled={(codes) => {
                setSaid(null);
                setShown({ codes, why: 'enabled' });
              }}
            />
          )}
        </>
      ) : null}
    </section>
  );
}

function StatusPanel({ status: s }: { status: Status }) {
  return (
    <section class="panel" aria-labelledby="mfa-status-heading">
      <div class="card-head">
        <h2 id="mfa-status-heading">Two-factor authentication</h2>
        <div class="badges">{s.totp_enabled ? <Badge kind="ok">On</Badge> : <Badge kind="pending">Off</Badge>}</div>
      </div>
      <p>Signing in asks for a code from an authenticator app on your phone as well as your password, so a stolen password alone is not enough.</p>
      <dl class="mfa-facts">
        <dt>Status</dt>
        <dd>{s.totp_enabled ? 'On' : 'Off'}</dd>
        {s.totp_enabled ? (
          <>
            <dt>Recovery codes left</dt>
            <dd>{s.recovery_codes_remaining} of 10</dd>
          </>
        ) : null}
        <dt>Required for your role</dt>
        <dd>{s.required ? 'Yes' : 'No'}</dd>
      </dl>
      {s.required && !s.totp_enabled ? (
        <p class="mfa-required" role="alert">
          <strong>Your role requires two-factor authentication.</strong> Set it up below to continue using the dashboard.
        </p>
      ) : null}
    </section>
  );
}

/** A one-time code from the authenticator app: six digits, offered by the phone's keyboard and autofill. */
function CodeInput(props: { label: string; value: string; onValue: (v: string) => void; error?: string | undefined; hint?: string; recovery?: boolean }) {
  return (
    <TextInput
      label={props.label}
      value={props.value}
      onValue={props.onValue}
      error={props.error}
      hint={props.hint}
      autoComplete="one-time-code"
      // A recovery code has letters; a TOTP code is digits only.
      inputMode={props.recovery ? 'text' : 'numeric'}
      maxLength={props.recovery ? 64 : 6}
      autoCapitalize="none"
      spellcheck={false}
      required
    />
  );
}

const MISSING_CODE = 'Enter the 6-digit code from your authenticator app.';

function Enroll({ onEnabled }: { onEnabled: (codes: readonly string[]) => void }) {
  const [enrollment, setEnrollment] = useState<Enrollment | null>(null);
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | undefined>();
  const start = useSubmit({ mutationFn: () => trpc.auth.mfa.enroll.mutate(), onSuccess: (e) => setEnrollment(e) });
  const confirm = useSubmit({
    mutationFn: (typed: string) => trpc.auth.mfa.confirm.mutate({ code: typed }),
    onSuccess: async ({ recovery_codes }) => {
      // The secret is of no more use to the page: it is forgotten with the form.
      setEnrollment(null);
      onEnabled(recovery_codes);
      await changed();
    },
  });
  if (!enrollment) {
    return (
      <div>
        <p>
          <button type="button" class="primary" onClick={() => start.submit()} disabled={start.isPending} aria-busy={start.isPending}>
            {start.isPending ? 'Preparing…' : 'Set up two-factor authentication'}
          </button>
        </p>
        <Failure error={start.error} />
      </div>
    );
  }
  return (
    <section class="panel" aria-labelledby="enroll-heading">
      <h2 id="enroll-heading">Set up your authenticator app</h2>
      <ol class="howto">
        <li>Open an authenticator app on your phone (for example Google Authenticator, Microsoft Authenticator, 1Password or Aegis).</li>
        <li>Scan this QR code, or type the key below into the app.</li>
        <li>Enter the 6-digit code the app then shows.</li>
      </ol>
      <QrCode text={enrollment.otpauth_url} />
      <p class="manual-key">
        <span id="manual-key-label">Key for manual entry (time-based, 6 digits, 30 seconds):</span>{' '}
        <code aria-labelledby="manual-key-label" class="totp-secret secret">
          {groups(enrollment.secret)}
        </code>
      </p>
      <form
        noValidate
        aria-label="Confirm two-factor authentication"
        onSubmit={onSubmitted(async () => {
          const typed = code.replace(/\s/g, '');
          setError(typed === '' ? MISSING_CODE : undefined);
          if (typed !== '') confirm.submit(typed);
        })}
      >
        <CodeInput label="Code from the app" value={code} onValue={setCode} error={error} />
        <Failure error={confirm.error} />
        <FormActions pending={confirm.isPending} pendingText="Checking…" onCancel={() => setEnrollment(null)}>
          Turn on two-factor authentication
        </FormActions>
      </form>
    </section>
  );
}

/** The secret in groups of four, as authenticator apps show and accept it (they ignore the spaces). */
function groups(secret: string): string {
  return (secret.match(/.{1,4}/g) ?? []).join(' ');
}

function QrCode({ text }: { text: string }) {
  const [drawing, setDrawing] = useState<QrDrawing | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let current = true;
    drawQr(text).then(
      (d) => current && setDrawing(d),
      () => current && setFailed(true),
    );
    return () => {
      current = false;
    };
  }, [text]);
  if (failed) return <p class="field-error">The QR code could not be drawn: type the key below into the app instead.</p>;
  if (!drawing) return <Loading what="the QR code" />;
  // Four modules of white around the code: the quiet zone scanners need.
  const side = drawing.size + 8;
  return (
    <svg class="qr" viewBox={`-4 -4 ${String(side)} ${String(side)}`} role="img" aria-label="QR code to scan with your authenticator app" shape-rendering="crispEdges">
      <rect x="-4" y="-4" width={side} height={side} fill="#fff" />
      <path d={drawing.path} fill="#000" />
    </svg>
  );
}

function RecoveryCodes({ shown, onDone }: { shown: ShownCodes; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const [copy, setCopy] = useState<CopyOutcome | null>(null);
  const text = `agent-org recovery codes\nEach code can be used once, in place of a code from the authenticator app.\n\n${shown.codes.join('\n')}\n`;
  const [href, setHref] = useState<string | null>(null);
  useEffect(() => heading.current?.focus(), []);
  useEffect(() => {
    // A Blob URL of this page: the codes are saved without being sent anywhere.
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    setHref(url);
    return () => URL.revokeObjectURL(url);
  }, [text]);
  const copyCodes = async () => setCopy(await copyOrSelect(text, listRef.current));
  return (
    <section class="panel secret-panel" aria-labelledby="codes-heading">
      <h2 id="codes-heading" ref={heading} tabIndex={-1}>
        {shown.why === 'enabled' ? 'Two-factor authentication is on: save your recovery codes' : 'Your new recovery codes'}
      </h2>
      <p class="secret-warning">
        <strong>Save these codes now: you will not see them again.</strong> Each one signs you in once if your phone is lost.
        {shown.why === 'regenerated' ? ' The codes you had before no longer work.' : ''}
      </p>
      <ul class="recovery-codes" aria-label="Recovery codes" ref={listRef}>
        {shown.codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div class="actions">
        <button type="button" class="primary" onClick={() => void copyCodes()}>
          Copy the codes
        </button>
        {href ? (
          <a class="button" href={href} download="agent-org-recovery-codes.txt">
            Download as a text file
          </a>
        ) : null}
        <button type="button" onClick={onDone}>
          Done, I saved them
        </button>
      </div>
      <div aria-live="polite" class="copy-result">
        {copy === 'copied' ? <p>Copied to the clipboard.</p> : null}
        {copy === 'failed' ? <p>The clipboard is not available here: the codes are selected, copy them with Ctrl+C (⌘C on a Mac).</p> : null}
      </div>
    </section>
  );
}

function Regenerate({ onCodes }: { onCodes: (codes: readonly string[]) => void }) {
  const [open, setOpen] = useState(false);
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | undefined>();
  const regenerate = useSubmit({
    mutationFn: (typed: string) => trpc.auth.mfa.regenerateRecoveryCodes.mutate({ code: typed }),
    onSuccess: async ({ recovery_codes }) => {
      setOpen(false);
      setCode('');
      onCodes(recovery_codes);
      await changed();
    },
  });
  if (!open) return <OpenFormButton onOpen={() => setOpen(true)}>New recovery codes…</OpenFormButton>;
  return (
    <section class="panel" aria-labelledby="regenerate-heading">
      <h2 id="regenerate-heading">New recovery codes</h2>
      <form
        noValidate
        aria-label="New recovery codes"
        onSubmit={onSubmitted(async () => {
          const typed = code.replace(/\s/g, '');
          setError(typed === '' ? MISSING_CODE : undefined);
          if (typed !== '') regenerate.submit(typed);
        })}
      >
        <p>Ten new codes replace the ones you have; the old ones stop working.</p>
        <CodeInput label="Code from the app" value={code} onValue={setCode} error={error} />
        <Failure error={regenerate.error} />
        <FormActions
          pending={regenerate.isPending}
          pendingText="Creating…"
          onCancel={() => {
            setOpen(false);
            regenerate.reset();
          }}
        >
          Create new codes
        </FormActions>
      </form>
    </section>
  );
}

function TurnOff({ onOff }: { onOff: () => void }) {
  const [open, setOpen] = useState(false);
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [errors, setErrors] = useState<{ password?: string; code?: string }>({});
  const disable = useSubmit({
    mutationFn: (input: { password: string; code: string }) => trpc.auth.mfa.disable.mutate(input),
    onSuccess: async () => {
      setOpen(false);
      onOff();
      // Written before the refetch: the page does not show the on state for a moment longer.
      queryClient.setQueryData(keys.mfa, (old: Status | null | undefined) => (old ? { ...old, totp_enabled: false, recovery_codes_remaining: 0 } : old));
      await changed();
    },
  });
  if (!open) {
    return (
      <p>
        <button type="button" class="danger-outline" onClick={() => setOpen(true)}>
          Turn off two-factor authentication…
        </button>
      </p>
    );
  }
  return (
    <section class="panel confirm-panel" aria-labelledby="turn-off-heading">
      <h2 id="turn-off-heading">Turn off two-factor authentication</h2>
      <form
        noValidate
        aria-label="Turn off two-factor authentication"
        onSubmit={onSubmitted(async () => {
          const typed = code.replace(/\s/g, '');
          const found = {
            ...(password === '' ? { password: 'Enter your password.' } : {}),
            ...(typed === '' ? { code: 'Enter a code from the app or a recovery code.' } : {}),
          };
          setErrors(found);
          if (Object.keys(found).length === 0) disable.submit({ password, code: typed });
        })}
      >
        <p>Signing in will need only your password. Your recovery codes stop working.</p>
        <TextInput label="Password" type="password" value={password} onValue={setPassword} error={errors.password} autoComplete="current-password" required />
        <CodeInput label="Code from the app, or a recovery code" value={code} onValue={setCode} error={errors.code} recovery />
        <Failure error={disable.error} />
        <div class="actions">
          <Submit pending={disable.isPending} pendingText="Turning off…" class="danger">
            Turn off
          </Submit>
          <button
            type="button"
            onClick={() => {
              setOpen(false);
              disable.reset();
            }}
            disabled={disable.isPending}
          >
            Keep it on
          </button>
        </div>
      </form>
    </section>
  );
}
