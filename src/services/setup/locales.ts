// Name locales of the wizard: the available list, the chosen selection, and changing it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { LOCALE_DISPLAY_NAMES, NAME_LOCALE_REGIONS, localeSelectionProblem } from '../../data/nameLocales.ts';
import { ApiError } from '../../errors.ts';
import { recordEvent } from '../../events/record.ts';
import type { AvailableLocalesResponse, SetupNameLocalesResponse } from '../../contracts/setup.ts';
import { lockOpenSetup } from './state.ts';
import { readState, saveLocales } from './store.ts';
import type { Actor } from '../../contracts/actor.ts';
import type { Clock } from '../../contracts/clock.ts';
import { ALL_LOCALES_SENTINEL } from '../../contracts/catalogue.ts';

export function availableLocales(): AvailableLocalesResponse {
  return {
    regions: Object.fromEntries(Object.entries(NAME_LOCALE_REGIONS).map(([region, codes]) => [region, [...codes]])),
    display_names: { ...LOCALE_DISPLAY_NAMES },
  };
}

export async function getLocales({ em }: { em: EntityManager }): Promise<SetupNameLocalesResponse> {
  const state = await readState(em);
  return { locales: state?.nameLocales ?? [ALL_LOCALES_SENTINEL] };
}

export async function setLocales(
  { em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor },
  input: { locales: string[] },
): Promise<SetupNameLocalesResponse> {
  return em.transactional(async (tx) => {
    await lockOpenSetup(tx);
    const problem = localeSelectionProblem(input.locales);
    if (problem !== undefined) throw ApiError.validation(`locales: ${problem}`);
    const now = clock.now();
    await saveLocales(tx, input.locales, now);
    const chosen = { locales: [...input.locales] };
    await recordEvent(tx, { type: 'setup.locales_updated', actor: actor.username, at: now, data: chosen });
    return chosen;
  });
}
