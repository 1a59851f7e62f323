// Small building blocks every page uses: titled pages, labelled fields, submit buttons, failure messages.
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { describeFailure, retryText } from '../lib/problems.ts';

/** The page's heading: names the tab, and takes focus on arrival so screen readers announce the new page. */
export function PageTitle({ children, title }: { children: ComponentChildren; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · agent-org`;
    ref.current?.focus();
  }, [title]);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

type FieldProps = {
  label: string;
  error?: string | undefined;
  hint?: ComponentChildren;
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ComponentChildren;
};

/** A label, the control, a hint and the field's error, wired together with ids and aria attributes. */
export function Field({ label, error, hint, children }: FieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field${error ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children({ id, describedBy, invalid: Boolean(error) })}
      {hint ? (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** What every labelled text control takes beside its element's own attributes. */
type TextControlProps = {
  label: string;
  value: string;
  onValue: (value: string) => void;
  error?: string | undefined;
  hint?: ComponentChildren;
};

type InputProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'value' | 'onInput' | 'label'> & TextControlProps;

export function TextInput({ label, value, onValue, error, hint, ...rest }: InputProps) {
  return (
    <Field label={label} error={error} hint={hint}>
      {({ id, describedBy, invalid }) => (
        <input
          {...rest}
          id={id}
          value={value}
          aria-invalid={invalid}
          aria-describedby={describedBy}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

type TextAreaProps = Omit<JSX.TextareaHTMLAttributes<HTMLTextAreaElement>, 'value' | 'onInput' | 'label'> & TextControlProps;

export function TextArea({ label, value, onValue, error, hint, ...rest }: TextAreaProps) {
  return (
    <Field label={label} error={error} hint={hint}>
      {({ id, describedBy, invalid }) => (
        <textarea
          rows={3}
          {...rest}
          id={id}
          value={value}
          aria-invalid={invalid}
          aria-describedby={describedBy}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

type SelectProps = {
  label: string;
  value: string;
  onValue: (value: string) => void;
  options: ReadonlyArray<{ value: string; label: string }>;
  error?: string | undefined;
  hint?: ComponentChildren;
  disabled?: boolean;
  name?: string;
};

export function Select({ label, value, onValue, options, error, hint, disabled, name }: SelectProps) {
  return (
    <Field label={label} error={error} hint={hint}>
      {({ id, describedBy, invalid }) => (
        <select id={id} name={name} value={value} disabled={disabled} aria-invalid={invalid} aria-describedby={describedBy} onChange={(e) => onValue(e.currentTarget.value)}>
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A form's onSubmit: stays on the page and runs `work`, which may wait for the API's schemas to load. */
export function onSubmitted(work: () => Promise<void>): (e: Event) => void {
  return (e) => {
    e.preventDefault();
    void work();
  };
}

/** A submit button that cannot be pressed twice: disabled while its request is under way. */
export function Submit({ pending, children, pendingText, class: className, disabled }: { pending: boolean; children: ComponentChildren; pendingText?: string; class?: string; disabled?: boolean }) {
  return (
    <button type="submit" class={className ?? 'primary'} disabled={pending || disabled} aria-busy={pending}>
      {pending ? (pendingText ?? 'Working…') : children}
    </button>
  );
}

/** A closed create form: the one button that opens it. */
export function OpenFormButton({ children, onOpen }: { children: ComponentChildren; onOpen: () => void }) {
  return (
    <p>
      <button type="button" onClick={onOpen}>
        {children}
      </button>
    </p>
  );
}

/** A form's submit button and a Cancel beside it (both held while the submission is under way). */
export function FormActions({ pending, pendingText, children, onCancel }: { pending: boolean; pendingText: string; children: ComponentChildren; onCancel: () => void }) {
  return (
    <div class="actions">
      <Submit pending={pending} pendingText={pendingText}>
        {children}
      </Submit>
      <button type="button" onClick={onCancel} disabled={pending}>
        Cancel
      </button>
    </div>
  );
}

/** Seconds left until `until` (ms since epoch), ticking once a second; 0 when it has passed. */
function useCountdown(until: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (until === null) return;
    setNow(Date.now());
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [until]);
  return until === null ? 0 : Math.max(0, Math.ceil((until - now) / 1000));
}

/** A failed call, in words: the server's ProblemDetail `detail`, and for rate limits when to try again. */
export function Failure({ error }: { error: unknown }) {
  const failure = error ? describeFailure(error) : null;
  const [until, setUntil] = useState<number | null>(null);
  useEffect(() => {
    setUntil(failure?.retryAfter != null ? Date.now() + failure.retryAfter * 1000 : null);
  }, [error]);
  const left = useCountdown(until);
  if (!failure) return null;
  return (
    <div class="failure" role="alert">
      <p>{failure.message}</p>
      {failure.retryAfter !== null ? <p class="retry">{left > 0 ? retryText(left) : 'You can try again now.'}</p> : null}
    </div>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="notice" role="status">
      {children}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

export function Badge({ kind, children, title }: { kind: string; children: ComponentChildren; title?: string }) {
  return (
    <span class={`badge badge-${kind}`} title={title}>
      {children}
    </span>
  );
}
