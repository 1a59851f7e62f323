// Agent names for the roster: realistic ones from the chosen locales, never repeating a name already taken.
import type * as NameGenerator from '../../data/nameGenerator.ts';

const ATTEMPTS = 10;

/**
 * A name from `generate` that is not in `taken`. Small locale pools (one locale, a dozen given names)
 * can run dry, so after a bounded number of draws a number tells the newcomer apart.
 */
export function distinctName(generate: () => string, taken: ReadonlySet<string>): string {
  let name = '';
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    name = generate();
    if (!taken.has(name)) return name;
  }
  for (let n = 2; ; n++) {
    const numbered = `${name} ${String(n)}`;
    if (!taken.has(numbered)) return numbered;
  }
}

// faker-js's locale data is tens of megabytes: it is loaded when the first name is generated, not at boot.
let generator: Promise<typeof NameGenerator> | undefined;

/** A realistic full name from a random locale of the stored selection (null: none chosen, i.e. all). */
export async function localeName(locales: readonly string[] | null, taken: ReadonlySet<string>): Promise<string> {
  const { randomFullName } = await (generator ??= import('../../data/nameGenerator.ts'));
  return distinctName(() => randomFullName(locales ?? []), taken);
}
