// The typed Kysely view of the schema: table and column types inferred from the entity definitions.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MikroKyselyPlugin, type InferKyselyDB } from '@mikro-orm/postgresql';
import type { Kysely, KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, Selectable, UnknownRow } from 'kysely';
import type { entities } from './entities/index.ts';

const NAMING = { columnNamingStrategy: 'property' } as const;

/** Tables by name, columns by entity property name (camelCase), values as the entities type them. */
export type DB = InferKyselyDB<(typeof entities)[number], typeof NAMING & { convertValues: true }>;

/** A row of a table as a select returns it (e.g. `Stored<'approvals'>`), typed from its entity. */
export type Stored<Table extends keyof DB> = Selectable<DB[Table]>;

/** Kysely on the request's EntityManager: inside its transaction when there is one; Dates arrive as Dates. */
export function kysely(em: EntityManager): Kysely<DB> {
  return em.getKysely<DB>().withPlugin(new EntityRowsPlugin(em));
}

/**
 * Statements go through MikroORM's own plugin (property names → columns). Rows come back through ours:
 * the ORM plugin's result pass rebuilt a map of every column of every entity in the query and walked it
 * for each row (measured: most of a 50-row page's CPU), where two small tables built once per process do.
 * The driver already parses json, jsonb, arrays and booleans; only timestamps arrive as text.
 */
class EntityRowsPlugin implements KyselyPlugin {
  readonly #names: MikroKyselyPlugin;

  constructor(em: EntityManager) {
    this.#names = new MikroKyselyPlugin(em, NAMING);
    rowShape ??= shapeOf(em);
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.#names.transformQuery(args);
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const shape = rowShape;
    if (!shape || args.result.rows.length === 0) return Promise.resolve(args.result);
    return Promise.resolve({ ...args.result, rows: args.result.rows.map((row) => toEntityRow(row, shape)) });
  }
}

type RowShape = {
  /** Column name → property name (`created_at` → `createdAt`) for every column whose names differ. */
  propertyOf: ReadonlyMap<string, string>;
  /** Property names that hold timestamps in every entity that has them. */
  dates: ReadonlySet<string>;
};

// Derived from the entity metadata, which is fixed for the life of the process.
let rowShape: RowShape | undefined;

function shapeOf(em: EntityManager): RowShape {
  const propertyOf = new Map<string, string>();
  const dates = new Set<string>();
  for (const meta of em.getMetadata().getAll().values()) {
    for (const prop of meta.props) {
      for (const field of prop.fieldNames ?? []) if (field !== prop.name) propertyOf.set(field, prop.name);
      if (prop.runtimeType === 'Date') dates.add(prop.name);
    }
  }
  return { propertyOf, dates };
}

function toEntityRow(row: UnknownRow, shape: RowShape): UnknownRow {
  const out: UnknownRow = {};
  for (const column in row) {
    const name = shape.propertyOf.get(column) ?? column;
    const value = row[column];
    out[name] = typeof value === 'string' && shape.dates.has(name) ? new Date(value) : value;
  }
  return out;
}
