// The setup area's storage: the wizard's state row, the agent roster, and whether a CEO exists.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ExpressionBuilder } from 'kysely';
import { kysely, type DB, type Stored } from '../../db/kysely.ts';

export type SetupStateRecord = Stored<'setup_state'>;
export type AgentRecord = Stored<'setup_agents'>;
/** An agent before it has a position in the roster. */
export type NewAgent = Omit<AgentRecord, 'agentIndex' | 'createdAt' | 'updatedAt'>;
/** What an edit of one agent may change. */
export type AgentChange = Partial<Pick<AgentRecord, 'name' | 'personalityPreset' | 'modelProvider' | 'modelId' | 'tier'>>;

/** The company fields of the state row and the size of the roster, read in one statement (one snapshot). */
export type CompanyRecord = { companyName: string } & Pick<SetupStateRecord, 'companyDescription' | 'templateName'> & {
  agentCount: number;
  departmentCount: number;
};

/** The single row's key: one wizard per deployment. */
const STATE_ID = 1;

export async function readState(em: EntityManager): Promise<SetupStateRecord | undefined> {
  return kysely(em).selectFrom('setup_state').selectAll().where('id', '=', STATE_ID).executeTakeFirst();
}

/**
 * Creates the row if needed and locks it until the transaction ends. ON CONFLICT DO UPDATE takes the row
 * lock and returns the newest committed version, so a mutation waiting here sees what the previous one
 * wrote (a completion included) instead of a stale snapshot.
 */
export async function lockState(tx: EntityManager): Promise<SetupStateRecord> {
  return kysely(tx)
    .insertInto('setup_state')
    .values({ id: STATE_ID })
    .onConflict((conflict) => conflict.column('id').doUpdateSet((eb) => ({ id: eb.ref('setup_state.id') })))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function saveCompany(
  tx: EntityManager,
  company: Pick<SetupStateRecord, 'companyName' | 'companyDescription' | 'templateName'>,
  now: Date,
): Promise<void> {
  await kysely(tx)
    .updateTable('setup_state')
    .set({ ...company, updatedAt: now })
    .where('id', '=', STATE_ID)
    .execute();
}

export async function saveLocales(tx: EntityManager, locales: readonly string[], now: Date): Promise<void> {
  await kysely(tx)
    .updateTable('setup_state')
    .set({ nameLocales: [...locales], updatedAt: now })
    .where('id', '=', STATE_ID)
    .execute();
}

export async function markComplete(tx: EntityManager, now: Date): Promise<void> {
  await kysely(tx)
    .updateTable('setup_state')
    .set({ completedAt: now, updatedAt: now })
    .where('id', '=', STATE_ID)
    .execute();
}

/** The company as last created, or undefined before one exists. */
export async function readCompany(em: EntityManager): Promise<CompanyRecord | undefined> {
  const row = await kysely(em)
    .selectFrom('setup_state')
    .select(['companyName', 'companyDescription', 'templateName'])
    .select((eb) => [
      eb.selectFrom('setup_agents').select((agents) => agents.fn.countAll<number>().as('n')).as('agentCount'),
      eb.selectFrom('setup_agents').select((agents) => agents.fn.count<number>('department').distinct().as('n')).as('departmentCount'),
    ])
    .where('id', '=', STATE_ID)
    .executeTakeFirst();
  if (row === undefined || row.companyName === null) return undefined;
  return {
    companyName: row.companyName,
    companyDescription: row.companyDescription,
    templateName: row.templateName,
    // A scalar subquery is null to the type system; a count always has its row.
    agentCount: row.agentCount ?? 0,
    departmentCount: row.departmentCount ?? 0,
  };
}

/** The facts of the public status, in one round-trip: first-run clients poll it. */
export async function readStatusFacts(em: EntityManager): Promise<{ hasCeo: boolean; hasAgents: boolean; hasCompany: boolean; hasLocales: boolean; completed: boolean }> {
  const state = (eb: ExpressionBuilder<DB, never>) => eb.selectFrom('setup_state').select('id').where('id', '=', STATE_ID);
  const row = await kysely(em)
    .selectNoFrom((eb) => [
      // The users table belongs to auth; setup reads only this one fact of it (needs_admin).
      eb.exists(eb.selectFrom('users').select('id').where('role', '=', 'ceo')).as('hasCeo'),
      eb.exists(eb.selectFrom('setup_agents').select('agentIndex')).as('hasAgents'),
      eb.exists(state(eb).where('companyName', 'is not', null)).as('hasCompany'),
      eb.exists(state(eb).where('nameLocales', 'is not', null)).as('hasLocales'),
      eb.exists(state(eb).where('completedAt', 'is not', null)).as('completed'),
    ])
    .executeTakeFirstOrThrow();
  return {
    hasCeo: row.hasCeo === true,
    hasAgents: row.hasAgents === true,
    hasCompany: row.hasCompany === true,
    hasLocales: row.hasLocales === true,
    completed: row.completed === true,
  };
}

export async function allAgents(em: EntityManager): Promise<AgentRecord[]> {
  return kysely(em).selectFrom('setup_agents').selectAll().orderBy('agentIndex').execute();
}

/** Up to `limit` agents after position `after`, by agent_index. */
export async function agentsAfter(em: EntityManager, after: number, limit: number): Promise<AgentRecord[]> {
  return kysely(em).selectFrom('setup_agents').selectAll().where('agentIndex', '>', after).orderBy('agentIndex').limit(limit).execute();
}

export async function findAgent(em: EntityManager, index: number): Promise<AgentRecord | undefined> {
  return kysely(em).selectFrom('setup_agents').selectAll().where('agentIndex', '=', index).executeTakeFirst();
}

export async function agentNames(em: EntityManager): Promise<string[]> {
  const rows = await kysely(em).selectFrom('setup_agents').select('name').execute();
  return rows.map((row) => row.name);
}

export async function agentCount(em: EntityManager): Promise<number> {
  const row = await kysely(em)
    .selectFrom('setup_agents')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Appends agents at positions `from`, `from + 1`, ... in one statement. */
export async function insertAgents(tx: EntityManager, agents: readonly NewAgent[], from: number, now: Date): Promise<AgentRecord[]> {
  if (agents.length === 0) return [];
  return kysely(tx)
    .insertInto('setup_agents')
    .values(agents.map((agent, i) => ({ ...agent, agentIndex: from + i, createdAt: now, updatedAt: now })))
    .returningAll()
    .execute();
}

export async function updateAgent(tx: EntityManager, index: number, change: AgentChange, now: Date): Promise<AgentRecord> {
  return kysely(tx)
    .updateTable('setup_agents')
    .set({ ...change, updatedAt: now })
    .where('agentIndex', '=', index)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteAllAgents(tx: EntityManager): Promise<void> {
  await kysely(tx).deleteFrom('setup_agents').execute();
}
