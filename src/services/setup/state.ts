// The wizard lock: every wizard mutation takes it first, and once setup is complete the wizard is read-only.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors.ts';
import { lockState, type SetupStateRecord } from './store.ts';

/** Locks the state row until the transaction ends and refuses once setup is complete (409/4000). */
export async function lockOpenSetup(tx: EntityManager): Promise<SetupStateRecord> {
  const state = await lockState(tx);
  if (state.completedAt !== null) throw ApiError.conflict('setup is already complete');
  return state;
}
