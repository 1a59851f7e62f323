// Form checks with the API's zod schemas: the first problem per field, in words a person reads.
import type { z } from 'zod';

export type FieldErrors = Record<string, string>;
export type Checked<T> = { ok: true; data: T } | { ok: false; errors: FieldErrors };

type Issue = z.core.$ZodIssue;

/** One sentence for one zod issue, without the field name (the form shows it beside the field). */
export function issueMessage(issue: Issue, value?: unknown): string {
  switch (issue.code) {
    case 'too_small':
      if (issue.origin === 'string') return issue.minimum === 1 ? 'Required.' : `At least ${String(issue.minimum)} characters.`;
      if (issue.origin === 'array') return `Choose at least ${String(issue.minimum)}.`;
      return `At least ${String(issue.minimum)}.`;
    case 'too_big':
      if (issue.origin === 'string') return `At most ${String(issue.maximum)} characters.`;
      if (issue.origin === 'array') return `At most ${String(issue.maximum)} items.`;
      return `At most ${String(issue.maximum)}.`;
    case 'invalid_type':
      return value === undefined || value === null ? 'Required.' : 'Not a valid value.';
    case 'invalid_value':
      return 'Choose one of the options.';
    case 'unrecognized_keys':
      return `Unknown fields: ${issue.keys.join(', ')}.`;
    default:
      return sentence(issue.message);
  }
}

function sentence(text: string): string {
  const t = text.trim();
  if (t === '') return 'Not a valid value.';
  const capital = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** Checks `input` against `schema`; field errors are keyed by the top-level field name. */
export function check<S extends z.ZodType>(schema: S, input: unknown): Checked<z.output<S>> {
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, data: result.data };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const field = issue.path.length > 0 ? String(issue.path[0]) : '_form';
    const value: unknown = field !== '_form' && typeof input === 'object' && input !== null ? Reflect.get(input, field) : input;
    errors[field] ??= issueMessage(issue, value);
  }
  return { ok: false, errors };
}

/** A text field's value as the API wants an optional string: blank → null. */
export function optionalText(value: string): string | null {
  return value.trim() === '' ? null : value;
}

/** A number field: blank → null, digits → a number, anything else stays a string so the schema refuses it. */
export function optionalNumber(value: string): number | string | null {
  const v = value.trim();
  if (v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : v;
}
