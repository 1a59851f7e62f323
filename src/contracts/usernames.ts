// The username as a request carries it: trimmed, NFC, no invisible characters (CONTRACT §3.4 rev. 2); pure, so the dashboard bundles it.
import { z } from 'zod';

export const MAX_USERNAME_LENGTH = 128;

// Control characters (C0, DEL, C1) and lone surrogates are refused as request-shape errors.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Characters that render blank or not at all (zero-width space, joiners, BOM, soft hyphen, the Hangul
// fillers, …: the default-ignorables; and U+2800, the braille blank, which is not one) and bidirectional
// controls (U+202A–U+202E, U+2066–U+2069, …) make two different names look the same, or one name look like
// another (CONTRACT §3.4 rev. 2, §3.7). The Hangul fillers are default-ignorables; they are named anyway.
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\u2800\u115f\u1160\u3164\uffa0]/u;

export const Username = z
  .string()
  // Before trimming, which would strip a leading or trailing BOM and let "\ufeffmallory" become mallory.
  .refine((s) => !INVISIBLE.test(s), 'must not contain invisible or bidirectional control characters')
  .transform((s) => s.trim().normalize('NFC'))
  .pipe(
    z
      .string()
      .min(1, 'must not be empty')
      .max(MAX_USERNAME_LENGTH, `too long (max ${String(MAX_USERNAME_LENGTH)})`)
      .refine((s) => !CONTROL.test(s), 'must not contain control characters')
      .refine((s) => s.isWellFormed(), 'must not contain lone surrogates'),
  )
  // The document shows the input side of a pipe, a bare string, so the limits are restated for it
  // (they bind after trimming; validation is the pipe above, unchanged).
  .meta({ minLength: 1, maxLength: MAX_USERNAME_LENGTH });
