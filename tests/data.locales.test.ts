// Name locales: SynthOrg's 57 codes in 11 regions, and realistic, seedable, collision-avoiding name generation.
import { describe, it, expect } from 'vitest';
import { LOCALE_DISPLAY_NAMES, NAME_LOCALE_REGIONS, isNameLocale, localeSelectionProblem, resolveNameLocales } from '../src/data/nameLocales.ts';
import { generateFullName, randomFullName } from '../src/data/nameGenerator.ts';
import { ALL_LOCALES_SENTINEL, ALL_NAME_LOCALES } from '../src/contracts/catalogue.ts';

describe('the locale list', () => {
  it('has exactly 57 distinct codes in 11 regions, each code in exactly one region', () => {
    expect(ALL_NAME_LOCALES).toHaveLength(57);
    expect(new Set(ALL_NAME_LOCALES).size).toBe(57);
    expect(Object.keys(NAME_LOCALE_REGIONS)).toHaveLength(11);
    const inRegions = Object.values(NAME_LOCALE_REGIONS).flat();
    expect(inRegions).toHaveLength(57);
    expect(new Set(inRegions)).toEqual(new Set(ALL_NAME_LOCALES));
  });

  it('includes the codes the contract names', () => {
    for (const code of ['en_US', 'de_DE', 'pt_BR', 'sw', 'zu_ZA']) expect(isNameLocale(code), code).toBe(true);
    expect(isNameLocale('xx_XX')).toBe(false);
    expect(isNameLocale(ALL_LOCALES_SENTINEL)).toBe(false);
  });

  it('every code has a display name and generates a non-empty full name', () => {
    expect(Object.keys(LOCALE_DISPLAY_NAMES).sort()).toEqual([...ALL_NAME_LOCALES].sort());
    expect(LOCALE_DISPLAY_NAMES.en_US).toBe('English (United States)');
    for (const code of ALL_NAME_LOCALES) {
      expect(LOCALE_DISPLAY_NAMES[code].length, code).toBeGreaterThan(0);
      for (const seed of [1, 2, 3]) {
        const name = generateFullName(code, seed);
        expect(name.split(' ').length, `${code}: ${name}`).toBeGreaterThanOrEqual(2);
        expect(name, code).toBe(name.trim());
        expect(name.length, code).toBeLessThanOrEqual(200);
      }
    }
  });

  it('names carry no honorifics or generational suffixes', () => {
    for (const code of ALL_NAME_LOCALES) {
      for (let seed = 0; seed < 20; seed++) {
        expect(generateFullName(code, seed), code).not.toMatch(/\b(Dr|Mr|Mrs|Ms|Jr|Sr|Ing|Herr|Frau|Mme|Mlle)\b\.?/);
      }
    }
  });
});

describe('generateFullName', () => {
  it('is deterministic for a seed and varies across seeds', () => {
    expect(generateFullName('de_DE', 42)).toBe(generateFullName('de_DE', 42));
    const names = new Set(Array.from({ length: 10 }, (_, seed) => generateFullName('de_DE', seed)));
    expect(names.size).toBeGreaterThan(5);
  });

  it('accepts a number source as the RNG hook', () => {
    const zero = (): number => 0;
    expect(generateFullName('en_US', zero)).toBe(generateFullName('en_US', zero));
  });

  it('without a seed still produces names', () => {
    expect(generateFullName('pt_BR').length).toBeGreaterThan(2);
  });

  it('gives surnames the form that matches the given name where the language requires it', () => {
    for (let seed = 0; seed < 30; seed++) {
      const icelandic = generateFullName('is_IS', seed);
      expect(icelandic, icelandic).toMatch(/(son|dóttir)$/);
    }
  });

  it('rejects an unknown locale', () => {
    expect(() => generateFullName('xx_XX')).toThrow(/unknown name locale/);
  });
});

describe('randomFullName', () => {
  it('draws only from the given locales', () => {
    for (let seed = 0; seed < 20; seed++) {
      expect(randomFullName(['is_IS'], undefined, seed)).toMatch(/(son|dóttir)$/);
    }
  });

  it('returns a name different from the excluded one', () => {
    for (let seed = 0; seed < 20; seed++) {
      const current = randomFullName(['sw', 'en_KE'], undefined, seed);
      expect(randomFullName(['sw', 'en_KE'], current, seed)).not.toBe(current);
    }
  });

  it('still differs when every draw collides (a stuck RNG), by adding a suffix', () => {
    const stuck = (): number => 0;
    const current = randomFullName(['fi_FI'], undefined, stuck);
    expect(randomFullName(['fi_FI'], undefined, stuck)).toBe(current);
    const next = randomFullName(['fi_FI'], current, stuck);
    expect(next).not.toBe(current);
    expect(next.startsWith(current)).toBe(true);
  });

  it('treats the __all__ sentinel and an empty selection as every locale', () => {
    expect(resolveNameLocales([ALL_LOCALES_SENTINEL])).toEqual(ALL_NAME_LOCALES);
    expect(resolveNameLocales([])).toEqual(ALL_NAME_LOCALES);
    expect(resolveNameLocales(null)).toEqual(ALL_NAME_LOCALES);
    expect(resolveNameLocales(['fr_FR', 'bogus'])).toEqual(['fr_FR']);
    expect(randomFullName([ALL_LOCALES_SENTINEL]).length).toBeGreaterThan(2);
  });
});

describe('localeSelectionProblem', () => {
  it('accepts __all__ alone or distinct known codes', () => {
    expect(localeSelectionProblem([ALL_LOCALES_SENTINEL])).toBeUndefined();
    expect(localeSelectionProblem(['en_US', 'sw'])).toBeUndefined();
    expect(localeSelectionProblem([...ALL_NAME_LOCALES])).toBeUndefined();
  });

  it('rejects empty, unknown, duplicate, too many, and __all__ mixed with codes', () => {
    expect(localeSelectionProblem([])).toMatch(/at least one/);
    expect(localeSelectionProblem(['en_US', 'xx_XX'])).toMatch(/unknown locale xx_XX/);
    expect(localeSelectionProblem(['en_US', 'en_US'])).toMatch(/duplicate locale en_US/);
    expect(localeSelectionProblem([ALL_LOCALES_SENTINEL, 'en_US'])).toMatch(/cannot be combined/);
    expect(localeSelectionProblem(Array.from({ length: 101 }, () => 'en_US'))).toMatch(/at most 100/);
  });
});
