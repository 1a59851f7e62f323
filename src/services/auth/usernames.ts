// Username normalisation: stored trimmed and NFC, unique and matched case-insensitively (CONTRACT §3.4).
import { z } from 'zod';

// Control characters (C0, DEL, C1) and lone surrogates are refused as request-shape errors.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export const Username = z
  .string()
  .transform((s) => s.trim().normalize('NFC'))
  .pipe(
    z
      .string()
      .min(1, 'must not be empty')
      .max(128, 'too long (max 128)')
      .refine((s) => !CONTROL.test(s), 'must not contain control characters')
      .refine((s) => s.isWellFormed(), 'must not contain lone surrogates'),
  );

export function usernameKey(username: string): string {
  return username.trim().normalize('NFC').toLowerCase();
}
