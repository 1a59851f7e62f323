// The typed Kysely view of the schema: tables and columns typed from the entity definitions.
import type { EntityManager, InferKyselyDB } from '@mikro-orm/postgresql';
import { CamelCasePlugin, sql, type Expression, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { entities } from './entities/index.ts';

/** Tables by name, columns by entity property name (camelCase), values as the entities type them. */
export type DB = InferKyselyDB<(typeof entities)[number], { columnNamingStrategy: 'property' }>;

/** A row of a table as a select returns it (e.g. `Stored<'approvals'>`), typed from its entity. */
export type Stored<Table extends keyof DB> = Selectable<DB[Table]>;

// Property names in queries and rows, each column its property in snake_case; keys inside JSON stay. MikroORM's own naming
// plugin would do it too, but its result step walks every property of every table for each row.
export const propertyNames = new CamelCasePlugin({ maintainNestedObjectKeys: true });

/** Kysely on the request's EntityManager: inside its transaction when there is one. */
export function kysely(em: EntityManager): Kysely<DB> {
  return em.getKysely<DB>().withPlugin(propertyNames);
}

/** A timestamp as the API writes it (CONTRACT §2.1), formatted by PostgreSQL for rows that go to the wire as they are. */
export function isoText(at: Expression<Date>): RawBuilder<string> {
  return sql<string>`to_char(${at} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
