// The wizard's state row: reading it, and locking it so every wizard mutation runs strictly one after another.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlRows } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';

export type SetupStateRow = {
  id: number;
  company_name: string | null;
  company_description: string | null;
  template_name: string | null;
  name_locales: string[] | null;
  completed_at: Date | null;
  updated_at: Date | null;
};

/** The state before anything was chosen; the row itself is created by the first mutation. */
const INITIAL: SetupStateRow = {
  id: 1,
  company_name: null,
  company_description: null,
  template_name: null,
  name_locales: null,
  completed_at: null,
  updated_at: null,
};

export async function readSetupState(em: EntityManager): Promise<SetupStateRow> {
  const [row] = await sqlRows<SetupStateRow>(em, 'select * from setup_state where id = 1');
  return row ?? INITIAL;
}

/**
 * Creates the row if needed and locks it until the transaction ends. ON CONFLICT DO UPDATE takes the row
 * lock and returns the newest committed version, so a mutation waiting here sees what the previous one
 * wrote (a completion included) instead of a stale snapshot.
 */
export async function lockSetupState(tx: EntityManager): Promise<SetupStateRow> {
  const [row] = await sqlRows<SetupStateRow>(
    tx,
    'insert into setup_state (id) values (1) on conflict (id) do update set id = setup_state.id returning *',
  );
  if (!row) throw new Error('setup_state lock returned no row');
  return row;
}

/** Locks the state and refuses once setup is complete: after completion the wizard is read-only. */
export async function lockOpenSetup(tx: EntityManager): Promise<SetupStateRow> {
  const state = await lockSetupState(tx);
  if (state.completed_at !== null) throw ApiError.conflict('setup is already complete');
  return state;
}
