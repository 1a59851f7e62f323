// The name locales' regions and display names, and how a stored selection is validated and resolved.
import { ALL_LOCALES_SENTINEL, ALL_NAME_LOCALES, type NameLocale } from '../contracts/catalogue.ts';

export const NAME_LOCALE_REGIONS: Readonly<Record<string, readonly NameLocale[]>> = Object.freeze({
  'Africa': ['en_KE', 'en_NG', 'fr_DZ', 'ha_NG', 'ig_NG', 'sw', 'tw_GH', 'yo_NG', 'zu_ZA'],
  'South Asia': ['en_IN', 'en_PK'],
  'Southeast Asia': ['en_TH', 'id_ID', 'vi_VN'],
  'Central Asia': ['az_AZ', 'uz_UZ'],
  'North America': ['en_US', 'fr_CA'],
  'Central America': ['es_MX'],
  'South America': ['es_AR', 'es_CL', 'es_CO', 'pt_BR'],
  'Pacific / Oceania': ['en_NZ'],
  'Western Europe': [
    'de_AT', 'de_CH', 'de_DE', 'de_LI', 'de_LU', 'en_GB', 'en_IE', 'es_CA', 'es_ES', 'fr_BE', 'fr_CH', 'fr_FR',
    'ga_IE', 'it_IT', 'nl_BE', 'nl_NL', 'pt_PT',
  ],
  'Northern Europe': ['da_DK', 'et_EE', 'fi_FI', 'is_IS', 'lt_LT', 'lv_LV', 'no_NO', 'sv_SE'],
  'Central / Eastern Europe': ['cs_CZ', 'hr_HR', 'hu_HU', 'pl_PL', 'ro_RO', 'sk_SK', 'sl_SI', 'tr_TR'],
});

export const LOCALE_DISPLAY_NAMES: Readonly<Record<NameLocale, string>> = Object.freeze({
  en_KE: 'English (Kenya)',
  en_NG: 'English (Nigeria)',
  fr_DZ: 'French (Algeria)',
  ha_NG: 'Hausa (Nigeria)',
  ig_NG: 'Igbo (Nigeria)',
  sw: 'Swahili',
  tw_GH: 'Twi (Ghana)',
  yo_NG: 'Yoruba (Nigeria)',
  zu_ZA: 'Zulu (South Africa)',
  en_IN: 'English (India)',
  en_PK: 'English (Pakistan)',
  en_TH: 'English (Thailand)',
  id_ID: 'Indonesian (Indonesia)',
  vi_VN: 'Vietnamese (Vietnam)',
  az_AZ: 'Azerbaijani (Azerbaijan)',
  uz_UZ: 'Uzbek (Uzbekistan)',
  en_US: 'English (United States)',
  fr_CA: 'French (Canada)',
  es_MX: 'Spanish (Mexico)',
  es_AR: 'Spanish (Argentina)',
  es_CL: 'Spanish (Chile)',
  es_CO: 'Spanish (Colombia)',
  pt_BR: 'Portuguese (Brazil)',
  en_NZ: 'English (New Zealand)',
  de_AT: 'German (Austria)',
  de_CH: 'German (Switzerland)',
  de_DE: 'German (Germany)',
  de_LI: 'German (Liechtenstein)',
  de_LU: 'German (Luxembourg)',
  en_GB: 'English (United Kingdom)',
  en_IE: 'English (Ireland)',
  es_CA: 'Catalan (Spain)',
  es_ES: 'Spanish (Spain)',
  fr_BE: 'French (Belgium)',
  fr_CH: 'French (Switzerland)',
  fr_FR: 'French (France)',
  ga_IE: 'Irish (Ireland)',
  it_IT: 'Italian (Italy)',
  nl_BE: 'Dutch (Belgium)',
  nl_NL: 'Dutch (Netherlands)',
  pt_PT: 'Portuguese (Portugal)',
  da_DK: 'Danish (Denmark)',
  et_EE: 'Estonian (Estonia)',
  fi_FI: 'Finnish (Finland)',
  is_IS: 'Icelandic (Iceland)',
  lt_LT: 'Lithuanian (Lithuania)',
  lv_LV: 'Latvian (Latvia)',
  no_NO: 'Norwegian (Norway)',
  sv_SE: 'Swedish (Sweden)',
  cs_CZ: 'Czech (Czechia)',
  hr_HR: 'Croatian (Croatia)',
  hu_HU: 'Hungarian (Hungary)',
  pl_PL: 'Polish (Poland)',
  ro_RO: 'Romanian (Romania)',
  sk_SK: 'Slovak (Slovakia)',
  sl_SI: 'Slovenian (Slovenia)',
  tr_TR: 'Turkish (Türkiye)',
});

// Regions and the flat list are written out separately for readability; fail at import if they drift.
const codesInRegions = Object.values(NAME_LOCALE_REGIONS).flat();
if (
  codesInRegions.length !== ALL_NAME_LOCALES.length ||
  codesInRegions.some((code, i) => code !== ALL_NAME_LOCALES[i])
) {
  throw new Error('NAME_LOCALE_REGIONS and ALL_NAME_LOCALES disagree');
}

const NAME_LOCALE_SET: ReadonlySet<string> = new Set(ALL_NAME_LOCALES);

export function isNameLocale(code: string): code is NameLocale {
  return NAME_LOCALE_SET.has(code);
}

/**
 * Why a requested locale selection is unacceptable, or undefined when it is fine: either exactly
 * `["__all__"]`, or 1..100 distinct known codes.
 */
export function localeSelectionProblem(locales: readonly string[]): string | undefined {
  if (locales.length === 0) return 'at least one locale is required';
  if (locales.length > 100) return 'at most 100 locales may be chosen';
  if (locales.includes(ALL_LOCALES_SENTINEL)) {
    return locales.length === 1 ? undefined : `${ALL_LOCALES_SENTINEL} cannot be combined with locale codes`;
  }
  const seen = new Set<string>();
  for (const code of locales) {
    if (!isNameLocale(code)) return `unknown locale ${code}`;
    if (seen.has(code)) return `duplicate locale ${code}`;
    seen.add(code);
  }
  return undefined;
}

/** A stored selection as concrete codes: nothing chosen or `["__all__"]` means every locale; unknown codes drop out. */
export function resolveNameLocales(stored: readonly string[] | null | undefined): readonly NameLocale[] {
  if (!stored || stored.length === 0 || stored.includes(ALL_LOCALES_SENTINEL)) return ALL_NAME_LOCALES;
  const known = stored.filter(isNameLocale);
  return known.length > 0 ? known : ALL_NAME_LOCALES;
}
