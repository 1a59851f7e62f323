// Finishing the wizard: the preconditions, then the one-way switch to complete.
import type { EntityManager } from '@mikro-orm/postgresql';
import { findModel } from '../../data/providerCatalogue.ts';
import { ApiError } from '../../errors.ts';
import { recordEvent } from '../../events/record.ts';
import type { SetupCompleteResponse } from '../../contracts/setup.ts';
import { lockOpenSetup } from './state.ts';
import { allAgents, markComplete } from './store.ts';
import type { Actor } from '../../contracts/actor.ts';
import type { Clock } from '../../contracts/clock.ts';
import type { ProviderCatalogue } from '../../contracts/catalogue.ts';

export async function completeSetup({ em, clock, providers, actor }: { em: EntityManager; clock: Clock; providers: ProviderCatalogue; actor: Actor }): Promise<SetupCompleteResponse> {
  return em.transactional(async (tx) => {
    // The lock makes completion and every other wizard mutation mutually exclusive: an agent added
    // concurrently either lands before this point (and is part of the completed roster) or sees the
    // completion and gets 409.
    const state = await lockOpenSetup(tx);
    if (state.companyName === null) throw ApiError.validation('setup cannot be completed: create the company first');
    if (providers.providers.length === 0) throw ApiError.validation('setup cannot be completed: no model provider is configured');
    const stale = (await allAgents(tx)).filter((agent) => !findModel(providers, agent.modelProvider, agent.modelId));
    if (stale.length > 0) {
      const named = stale.slice(0, 5).map((a) => `agent ${String(a.agentIndex)} (${a.modelProvider}/${a.modelId})`);
      const more = stale.length > 5 ? ` and ${String(stale.length - 5)} more` : '';
      throw ApiError.validation(`setup cannot be completed: models no longer offered by the provider catalogue: ${named.join(', ')}${more}`);
    }
    const now = clock.now();
    await markComplete(tx, now);
    const completed: SetupCompleteResponse = { setup_complete: true, completed_at: now.toISOString() };
    await recordEvent(tx, { type: 'setup.completed', actor: actor.username, at: now, data: completed });
    return completed;
  });
}
