// The wizard's catalogues: builtin company templates, personality presets (paginated by name) and the loaded provider catalogue.
import { PERSONALITY_PRESETS } from '../../data/personalityPresets.ts';
import { TEMPLATES, toTemplateInfo } from '../../data/templates.ts';
import { ApiError } from '../../errors.ts';
import type { PersonalityPresetInfoResponse, SetupProvidersResponse } from '../../contracts/setup.ts';
import { decodeCursor, toPage } from '../pagination.ts';
import { DEFAULT_PAGE_SIZE } from '../../contracts/pagination.ts';
import type { ProviderCatalogue, TemplateInfo } from '../../contracts/catalogue.ts';

export function listTemplates(): TemplateInfo[] {
  return TEMPLATES.map(toTemplateInfo);
}

const PRESETS_LIST = 'setup.personality_presets';

export function listPersonalityPresets({ secret }: { secret: Buffer }, input: { cursor?: string | null | undefined; limit?: number | null | undefined }) {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  let after: string | undefined;
  if (input.cursor) {
    const [position] = decodeCursor(secret, PRESETS_LIST, input.cursor);
    if (typeof position !== 'string') throw ApiError.badRequest('query.cursor: invalid or expired cursor');
    after = position;
  }
  // PERSONALITY_PRESETS is sorted by name, so the keyset is the name itself.
  const rows = PERSONALITY_PRESETS.filter((preset) => after === undefined || preset.name > after).slice(0, limit + 1);
  return toPage(rows, {
    limit,
    secret,
    list: PRESETS_LIST,
    positionOf: (preset) => [preset.name],
    toItem: (preset): PersonalityPresetInfoResponse => ({ name: preset.name, description: preset.description }),
  });
}

/** The catalogue is validated against the response's own schema at boot, so it is sent as loaded. */
export function listProviders({ providers }: { providers: ProviderCatalogue }): SetupProvidersResponse {
  return { providers: providers.providers };
}
