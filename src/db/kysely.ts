// The typed Kysely view of the schema: table and column types inferred from the entity definitions.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import type { Kysely, Selectable } from 'kysely';
import type { entities } from './entities/index.ts';

const KYSELY_OPTIONS = { columnNamingStrategy: 'property', convertValues: true } as const;

/** Tables by name, columns by entity property name (camelCase), values as the entities type them. */
export type DB = InferKyselyDB<(typeof entities)[number], typeof KYSELY_OPTIONS>;

/** Kysely on the request's EntityManager: inside its transaction when there is one; Dates arrive as Dates. */
export function kysely(em: EntityManager): Kysely<DB> {
  return em.getKysely<DB>(KYSELY_OPTIONS);
}

/** A row of a table as a select returns it (e.g. `Stored<'approvals'>`), typed from its entity. */
export type Stored<Table extends keyof DB> = Selectable<DB[Table]>;
