// The typed Kysely view of the schema: table and column types inferred from the entity definitions.
import { MikroKyselyPlugin, type EntityManager, type EntityMetadata, type EntityProperty, type InferKyselyDB, type MetadataStorage } from '@mikro-orm/postgresql';
import { ReferenceKind, type Platform } from '@mikro-orm/core';
import { AliasNode, IdentifierNode, OperationNodeTransformer, TableNode } from 'kysely';
import type {
  DeleteQueryNode,
  InsertQueryNode,
  Kysely,
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryId,
  QueryResult,
  RootOperationNode,
  Selectable,
  SelectQueryNode,
  UnknownRow,
  UpdateQueryNode,
} from 'kysely';
import type { entities } from './entities/index.ts';

const KYSELY_OPTIONS = { columnNamingStrategy: 'property', convertValues: true } as const;

/** Tables by name, columns by entity property name (camelCase), values as the entities type them. */
export type DB = InferKyselyDB<(typeof entities)[number], typeof KYSELY_OPTIONS>;

/** Kysely on the request's EntityManager: inside its transaction when there is one; Dates arrive as Dates. */
export function kysely(em: EntityManager): Kysely<DB> {
  return em.getKysely<DB>().withPlugin(new EntityResultPlugin(em));
}

/** A row of a table as a select returns it (e.g. `Stored<'approvals'>`), typed from its entity. */
export type Stored<Table extends keyof DB> = Selectable<DB[Table]>;

/** MikroORM's own plugin with the options above: what EntityResultPlugin must answer exactly like. */
export function mikroOrmPlugin(em: EntityManager): KyselyPlugin {
  return new MikroKyselyPlugin(em, KYSELY_OPTIONS);
}

/**
 * MikroORM's Kysely plugin (column ↔ property names, value conversion) with its result step compiled
 * once per query shape. MikroORM's plugin rebuilds a field → property map over every property of every
 * table in the query and walks all of it for each row (+80 % CPU on a 50-row list, +30 % on /auth/me,
 * bench/RESULTS.md). Here the same steps, in the same order and with the same per-property
 * conversions (customType, boolean, Date), are worked out once for a set of tables and a row's columns
 * and then applied to every row. Queries are still rewritten by MikroORM's plugin; a query whose tables
 * with a CTE has its result converted by MikroORM's plugin.
 * tests/db.kysely-plugin.test.ts holds both to the same output for every table.
 */
export class EntityResultPlugin implements KyselyPlugin {
  readonly #em: EntityManager;
  #inner: KyselyPlugin | undefined;
  readonly #compiler: PlanCompiler;
  // By query id across instances, as MikroORM keeps its own: a query compiled once (auth/store.ts) is run through later instances.
  static readonly #tables = new WeakMap<QueryId, Tables>();

  constructor(em: EntityManager) {
    this.#em = em;
    this.#compiler = compilerFor(em);
  }

  // Made on first need: building MikroORM's plugin (its transformer) cost ~25 µs, and a statement compiled
  // once (db/compiled.ts) only has its result converted, which needs it only for a CTE's.
  get #mikroOrm(): KyselyPlugin {
    return (this.#inner ??= mikroOrmPlugin(this.#em));
  }

  transformQuery(args: PluginTransformQueryArgs) {
    const tables = this.#compiler.tablesOf(args.node);
    if (tables !== null) EntityResultPlugin.#tables.set(args.queryId, tables);
    return this.#mikroOrm.transformQuery(args);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const rows = args.result.rows;
    const first = rows[0];
    // No rows, nothing to convert (a write without RETURNING): MikroORM's plugin is not even built.
    if (first === undefined) return args.result;
    const tables = EntityResultPlugin.#tables.get(args.queryId);
    if (tables === undefined) return this.#mikroOrm.transformResult(args);
    if (tables.length === 0) return args.result;
    const plan = this.#compiler.plan(tables, Object.keys(first));
    return { ...args.result, rows: rows.map(plan) };
  }
}

/** The tables whose properties MikroORM matches result columns against, keyed as it keys them (alias or name). */
type Tables = readonly (readonly [key: string, meta: EntityMetadata])[];
type Convert = (value: unknown) => unknown;
type Step = { readonly to: string; readonly from: string; readonly converts: readonly Convert[] };

const compilers = new WeakMap<MetadataStorage, PlanCompiler>();

function compilerFor(em: EntityManager): PlanCompiler {
  const metadata = em.getMetadata();
  let compiler = compilers.get(metadata);
  if (!compiler) compilers.set(metadata, (compiler = new PlanCompiler(metadata, em.getDriver().getPlatform())));
  return compiler;
}

class PlanCompiler {
  readonly #byName = new Map<string, EntityMetadata>();
  readonly #plans = new Map<string, (row: UnknownRow) => UnknownRow>();
  readonly #byTables = new WeakMap<Tables, Map<string, (row: UnknownRow) => UnknownRow>>();
  readonly #converters = new Map<EntityProperty, Convert>();
  readonly #platform: Platform;

  constructor(metadata: MetadataStorage, platform: Platform) {
    this.#platform = platform;
    // MikroORM's findEntityMetadata: a class name first, else the first entity with that table name.
    for (const meta of metadata) if (!this.#byName.has(meta.tableName)) this.#byName.set(meta.tableName, meta);
    for (const meta of metadata) this.#byName.set(meta.className, meta);
  }

  /**
   * The entity map MikroORM's transformer builds for a query (its keys and order decide which property
   * a column maps to), collected by the same walk; null for a query with a CTE, or not a select, insert,
   * update or delete, whose result is left to MikroORM's plugin.
   */
  tablesOf(node: RootOperationNode): Tables | null {
    if (!SELECT_INSERT_UPDATE_DELETE.has(node.kind)) return null;
    const collector = new TableCollector(this.#byName);
    collector.transformNode(node);
    return collector.unsupported ? null : [...collector.tables];
  }

  /** The row transformation MikroORM's transformer applies, for rows with exactly these columns in this order. */
  plan(tables: Tables, columns: readonly string[]): (row: UnknownRow) => UnknownRow {
    // A query compiled once keeps its tables object: found without spelling out the tables' key.
    const columnsKey = columns.join(',');
    let byColumns = this.#byTables.get(tables);
    const known = byColumns?.get(columnsKey);
    if (known) return known;
    const plan = this.#planOf(tables, columns);
    if (!byColumns) this.#byTables.set(tables, (byColumns = new Map<string, (row: UnknownRow) => UnknownRow>()));
    byColumns.set(columnsKey, plan);
    return plan;
  }

  #planOf(tables: Tables, columns: readonly string[]): (row: UnknownRow) => UnknownRow {
    const key = `${tables.map(([k, meta]) => `${k}=${meta.className}`).join(',')}|${columns.join(',')}`;
    let plan = this.#plans.get(key);
    if (plan) return plan;
    // Its buildGlobalFieldMap / buildGlobalRelationFieldMap, replayed on descriptors of where each value
    // comes from and which conversions it has gone through (transformRow), so key order and results match.
    const fields: Record<string, EntityProperty> = {};
    const relations: Record<string, string> = {};
    for (const [alias, meta] of tables) {
      Object.assign(fields, fieldMap(meta, alias));
      Object.assign(relations, relationMap(meta, alias));
    }
    const steps = new Map<string, Step>();
    for (const column of columns) steps.set(column, { to: column, from: column, converts: [] });
    for (const [field, prop] of Object.entries(fields)) {
      const step = steps.get(field);
      if (!step) continue;
      const converted: Step = { to: field, from: step.from, converts: [...step.converts, this.#converter(prop)] };
      if (prop.name !== field) {
        steps.set(prop.name, { ...converted, to: prop.name });
        steps.delete(field);
      } else steps.set(field, converted);
    }
    for (const [field, relation] of Object.entries(relations)) {
      const step = steps.get(field);
      if (step && !steps.has(relation)) {
        steps.set(relation, { ...step, to: relation });
        steps.delete(field);
      }
    }
    const compiled = [...steps.values()];
    plan = (row) => {
      const out: UnknownRow = {};
      for (const step of compiled) {
        let value = row[step.from];
        for (const convert of step.converts) value = convert(value);
        out[step.to] = value;
      }
      return out;
    };
    this.#plans.set(key, plan);
    return plan;
  }

  /** MikroORM's prepareOutputValue for one property, with what does not depend on the value decided once. */
  #converter(prop: EntityProperty): Convert {
    let convert = this.#converters.get(prop);
    if (convert) return convert;
    const platform = this.#platform;
    const customType = prop.customType;
    if (customType) convert = (value) => (value == null ? value : customType.convertToJSValue(value, platform));
    else if (prop.runtimeType === 'boolean') convert = (value) => (value == null ? value : !!value);
    else if (prop.runtimeType === 'Date' && !platform.isNumericProperty(prop)) {
      const tz = platform.getTimezone();
      convert = (value) => {
        // The driver gives timestamps as text (MikroORM's type parsers); a Date or null is passed on as MikroORM does.
        if (typeof value !== 'string' && typeof value !== 'number') return value;
        if (!tz || tz === 'local') return platform.parseDate(value);
        if (typeof value === 'number' || value.includes('+') || value.lastIndexOf('-') > 10 || value.endsWith('Z')) return platform.parseDate(value);
        return platform.parseDate(`${value}${tz}`);
      };
    } else convert = (value) => value;
    this.#converters.set(prop, convert);
    return convert;
  }
}

/** MikroORM's buildFieldToPropertyMap. */
function fieldMap(meta: EntityMetadata, alias: string): Record<string, EntityProperty> {
  const map: Record<string, EntityProperty> = {};
  for (const prop of meta.props) {
    for (const field of prop.fieldNames ?? []) {
      if (!(field in map)) map[field] = prop;
      if (alias) {
        for (const name of [`${alias}.${field}`, `${alias}_${field}`, `${alias}__${field}`]) if (!(name in map)) map[name] = prop;
      }
    }
    if (!(prop.name in map)) map[prop.name] = prop;
  }
  return map;
}

/** MikroORM's buildRelationFieldMap. */
function relationMap(meta: EntityMetadata, alias: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const prop of meta.props) {
    if (prop.kind !== ReferenceKind.MANY_TO_ONE && prop.kind !== ReferenceKind.ONE_TO_ONE) continue;
    const field = prop.fieldNames?.[0];
    if (field === undefined) continue;
    map[field] = prop.name;
    if (alias) {
      map[`${alias}.${field}`] = prop.name;
      map[`${alias}_${field}`] = prop.name;
      map[`${alias}__${field}`] = prop.name;
    }
  }
  return map;
}

const SELECT_INSERT_UPDATE_DELETE = new Set(['SelectQueryNode', 'InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode']);

/**
 * Replays where MikroORM's transformer (also an OperationNodeTransformer, recording before it descends)
 * adds to its entity map: FROM tables and joins of every select, also nested ones, the target of an
 * insert, update or delete. CTEs (which it maps through their source table) are not replayed.
 */
class TableCollector extends OperationNodeTransformer {
  readonly tables = new Map<string, EntityMetadata>();
  unsupported = false;
  readonly #byName: ReadonlyMap<string, EntityMetadata>;

  constructor(byName: ReadonlyMap<string, EntityMetadata>) {
    super();
    this.#byName = byName;
  }

  protected override transformSelectQuery(node: SelectQueryNode, queryId?: QueryId): SelectQueryNode {
    if (node.with) this.unsupported = true;
    for (const from of node.from?.froms ?? []) this.#from(from, false);
    for (const join of node.joins ?? []) this.#from(join.table, true);
    return super.transformSelectQuery(node, queryId);
  }

  protected override transformInsertQuery(node: InsertQueryNode, queryId?: QueryId): InsertQueryNode {
    if (node.with) this.unsupported = true;
    this.#target(node.into);
    return super.transformInsertQuery(node, queryId);
  }

  protected override transformUpdateQuery(node: UpdateQueryNode, queryId?: QueryId): UpdateQueryNode {
    if (node.with) this.unsupported = true;
    if (node.table && TableNode.is(node.table)) this.#target(node.table);
    for (const from of node.from?.froms ?? []) this.#from(from, false);
    for (const join of node.joins ?? []) this.#from(join.table, true);
    return super.transformUpdateQuery(node, queryId);
  }

  protected override transformDeleteQuery(node: DeleteQueryNode, queryId?: QueryId): DeleteQueryNode {
    if (node.with) this.unsupported = true;
    const first = node.from.froms[0];
    if (first && TableNode.is(first)) this.#target(first);
    for (const join of node.joins ?? []) this.#from(join.table, true);
    return super.transformDeleteQuery(node, queryId);
  }

  /** MikroORM's transformInsert/Update/DeleteQuery: the entity's table name as the key. */
  #target(node: TableNode | undefined): void {
    const meta = node ? this.#byName.get(node.table.identifier.name) : undefined;
    if (meta) this.tables.set(meta.tableName, meta);
  }

  /** MikroORM's processFromItem (join false) and processJoinNode (join true). */
  #from(item: OperationNode, join: boolean): void {
    if (AliasNode.is(item)) {
      if (!TableNode.is(item.node) || !IdentifierNode.is(item.alias)) return;
      const meta = this.#byName.get(item.node.table.identifier.name);
      if (meta) this.tables.set(item.alias.name, meta);
    } else if (TableNode.is(item)) {
      const name = item.table.identifier.name;
      const meta = this.#byName.get(name);
      if (meta) this.tables.set(join ? meta.tableName : name, meta);
    }
  }
}
