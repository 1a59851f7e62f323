// Name locales of the wizard: the available list, the chosen selection, and changing it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../context/deps.ts';
import { ALL_LOCALES_SENTINEL, LOCALE_DISPLAY_NAMES, NAME_LOCALE_REGIONS, localeSelectionProblem } from '../../data/nameLocales.ts';
import { sqlRun } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import { lockOpenSetup, readSetupState } from './state.ts';

export function availableLocales(): { regions: Record<string, string[]>; display_names: Record<string, string> } {
  return {
    regions: Object.fromEntries(Object.entries(NAME_LOCALE_REGIONS).map(([region, codes]) => [region, [...codes]])),
    display_names: { ...LOCALE_DISPLAY_NAMES },
  };
}

export async function getLocales(em: EntityManager): Promise<{ locales: string[] }> {
  const state = await readSetupState(em);
  return { locales: state.name_locales ?? [ALL_LOCALES_SENTINEL] };
}

export async function setLocales(em: EntityManager, deps: Deps, input: { locales: string[] }): Promise<{ locales: string[] }> {
  return em.transactional(async (tx) => {
    await lockOpenSetup(tx);
    const problem = localeSelectionProblem(input.locales);
    if (problem !== undefined) throw ApiError.validation(`locales: ${problem}`);
    // The selection is never empty here, so array[...] always has an element to type it by.
    await sqlRun(tx, 'update setup_state set name_locales = array[?]::text[], updated_at = ? where id = 1', [input.locales, deps.clock.now()]);
    return { locales: [...input.locales] };
  });
}
