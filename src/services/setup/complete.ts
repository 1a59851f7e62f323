// Finishing the wizard: the preconditions, then the one-way switch to complete.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../context/deps.ts';
import { findModel } from '../../data/providerCatalogue.ts';
import { sqlRun } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import { allAgents } from './agents.ts';
import { lockOpenSetup } from './state.ts';

export async function completeSetup(em: EntityManager, deps: Deps): Promise<{ setup_complete: true; completed_at: string }> {
  return em.transactional(async (tx) => {
    // The lock makes completion and every other wizard mutation mutually exclusive: an agent added
    // concurrently either lands before this point (and is part of the completed roster) or sees the
    // completion and gets 409.
    const state = await lockOpenSetup(tx);
    if (state.company_name === null) throw ApiError.validation('setup cannot be completed: create the company first');
    if (deps.providers.providers.length === 0) throw ApiError.validation('setup cannot be completed: no model provider is configured');
    const stale = (await allAgents(tx)).filter((agent) => !findModel(deps.providers, agent.model_provider, agent.model_id));
    if (stale.length > 0) {
      const named = stale.slice(0, 5).map((a) => `agent ${String(a.agent_index)} (${a.model_provider}/${a.model_id})`);
      const more = stale.length > 5 ? ` and ${String(stale.length - 5)} more` : '';
      throw ApiError.validation(`setup cannot be completed: models no longer offered by the provider catalogue: ${named.join(', ')}${more}`);
    }
    const now = deps.clock.now();
    await sqlRun(tx, 'update setup_state set completed_at = ?, updated_at = ? where id = 1', [now, now]);
    return { setup_complete: true as const, completed_at: now.toISOString() };
  });
}
