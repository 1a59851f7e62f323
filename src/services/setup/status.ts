// The public wizard status: what a first-run client still has to do.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../context/deps.ts';
import { sqlRows } from '../../db/sql.ts';
import { MIN_PASSWORD_LENGTH } from '../auth/passwords.ts';

export type SetupStatus = {
  needs_admin: boolean;
  needs_setup: boolean;
  has_providers: boolean;
  has_name_locales: boolean;
  has_company: boolean;
  has_agents: boolean;
  min_password_length: number;
};

export async function setupStatus(em: EntityManager, deps: Deps): Promise<SetupStatus> {
  // One round-trip: this endpoint is public and polled by first-run clients.
  const [row] = await sqlRows<{ has_ceo: boolean; has_agents: boolean; has_company: boolean; has_locales: boolean; completed: boolean }>(
    em,
    `select exists (select 1 from users where role = 'ceo') as has_ceo,
            exists (select 1 from setup_agents) as has_agents,
            coalesce(s.company_name is not null, false) as has_company,
            coalesce(s.name_locales is not null, false) as has_locales,
            coalesce(s.completed_at is not null, false) as completed
       from (select 1) as one left join setup_state s on s.id = 1`,
  );
  return {
    needs_admin: !(row?.has_ceo ?? false),
    needs_setup: !(row?.completed ?? false),
    has_providers: deps.providers.providers.length > 0,
    has_name_locales: row?.has_locales ?? false,
    has_company: row?.has_company ?? false,
    has_agents: row?.has_agents ?? false,
    min_password_length: MIN_PASSWORD_LENGTH,
  };
}
