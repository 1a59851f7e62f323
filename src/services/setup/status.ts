// The public wizard status: what a first-run client still has to do.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SetupStatusResponse } from '../../contracts/setup.ts';
import { MIN_PASSWORD_LENGTH } from '../../contracts/passwords.ts';
import { readStatusFacts } from './store.ts';
import type { ProviderCatalogue } from '../../contracts/catalogue.ts';

export async function setupStatus({ em, providers }: { em: EntityManager; providers: ProviderCatalogue }): Promise<SetupStatusResponse> {
  const facts = await readStatusFacts(em);
  return {
    needs_admin: !facts.hasCeo,
    needs_setup: !facts.completed,
    has_providers: providers.providers.length > 0,
    has_name_locales: facts.hasLocales,
    has_company: facts.hasCompany,
    has_agents: facts.hasAgents,
    min_password_length: MIN_PASSWORD_LENGTH,
  };
}
