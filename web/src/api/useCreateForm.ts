// A create form that shows as a button until opened: its values, its field errors, and an idempotent
// submission that, after a success, empties and closes the form, tells the page, and refreshes the channel.
import { useState } from 'preact/hooks';
import type { withIdempotencyKey } from '../../../src/client/index.ts';
import type { Checked, FieldErrors } from '../lib/forms.ts';
import { invalidateChannel, type Channel } from './keys.ts';
import { useIdempotentSubmit, type Submission } from './useSubmit.ts';

export type CreateForm<TValues, TInput, TData> = {
  open: boolean;
  setOpen: (open: boolean) => void;
  values: TValues;
  /** The onValue handler of one field. */
  set: (field: keyof TValues) => (value: string) => void;
  errors: FieldErrors;
  /** Shows the checks' field errors, or clears them when the checks passed. */
  showErrors: (checked: Checked<unknown>) => void;
  submission: Submission<TData, TInput>;
};

export function useCreateForm<TValues extends Record<string, string>, TInput, TData>(opts: {
  empty: TValues;
  send: (input: TInput, options: ReturnType<typeof withIdempotencyKey>) => Promise<TData>;
  /** The live channel whose queries show what was created. */
  channel: Channel;
  onCreated: (created: TData) => void;
}): CreateForm<TValues, TInput, TData> {
  const [open, setOpen] = useState(false);
  const [values, setValues] = useState(opts.empty);
  const [errors, setErrors] = useState<FieldErrors>({});
  const submission = useIdempotentSubmit(opts.send, async (created) => {
    setValues(opts.empty);
    setOpen(false);
    opts.onCreated(created);
    await invalidateChannel(opts.channel);
  });
  return {
    open,
    setOpen,
    values,
    set: (field) => (value) => setValues({ ...values, [field]: value }),
    errors,
    showErrors: (checked) => setErrors(checked.ok ? {} : checked.errors),
    submission,
  };
}
