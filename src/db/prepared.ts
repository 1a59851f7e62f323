// The hot reads PostgreSQL plans once per connection: pg's named statements, written with the typed Kysely view.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AliasNode, CamelCasePlugin, ColumnNode, IdentifierNode, InsertQueryNode, ReferenceNode, SelectionNode, SelectQueryNode, sql, UpdateQueryNode, type Compilable, type CompiledQuery } from 'kysely';
import type { Kysely, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RawBuilder, RootOperationNode, UnknownRow } from 'kysely';
import type { QueryResultRow } from 'pg';
import { isStalePlan } from '../errors.ts';
import type { DB } from './kysely.ts';
import { nativePool } from './pool.ts';

/** `$('name')`: where the statement takes the value `name`, typed as that value. */
export type Placeholder<V> = <K extends keyof V & string>(name: K) => RawBuilder<V[K]>;

/**
 * The names of kysely.ts's `propertyNames`, given by the statement itself: columns in snake_case as there, and each
 * selected column or expression aliased to the name that plugin's result step would give it, so PostgreSQL returns
 * rows under their property names and nothing copies every row to rename its keys.
 */
class PropertyAliases extends CamelCasePlugin {
  override transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = super.transformQuery(args);
    if (SelectQueryNode.is(node)) return { ...node, selections: node.selections?.map((selection) => this.#aliased(selection)) };
    // A write's rows are its RETURNING list.
    if ((InsertQueryNode.is(node) || UpdateQueryNode.is(node)) && node.returning) {
      return { ...node, returning: { ...node.returning, selections: node.returning.selections.map((selection) => this.#aliased(selection)) } };
    }
    return node;
  }

  // Nothing to rename: the statement's aliases did it.
  override transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }

  #aliased({ selection: s }: SelectionNode): SelectionNode {
    const name = AliasNode.is(s) ? IdentifierNode.is(s.alias) && s.alias.name : ColumnNode.is(s) ? s.column.name : ReferenceNode.is(s) && ColumnNode.is(s.column) && s.column.column.name;
    // `table.*` has no one name to give: its columns would come back under their SQL names.
    if (!name) throw new Error('a prepared statement selects (or returns) named columns or aliased expressions');
    return SelectionNode.create(AliasNode.create(AliasNode.is(s) ? s.node : s, IdentifierNode.create(this.camelCase(name))));
  }
}

const propertyAliases = new PropertyAliases({ maintainNestedObjectKeys: true });

/**
 * `prepared('session_lookup', (db, $: Placeholder<{ tokenHash: string }>) => db.selectFrom(…).where('tokenHash', '=', $('tokenHash')))`
 * writes the statement once (`$1`, `$2` … where its values go) and returns `(em, values) => rows`. Outside a transaction it goes out as
 * pg's `{ name, text, values }`, planned once per pooled connection; inside one, unnamed on the transaction's (Kysely keeps its client).
 * Rows come back from PostgreSQL as they are, under property names (PropertyAliases), so a statement names its columns (no `selectAll`).
 */
export function prepared<V extends Record<string, unknown>, R>(name: string, build: (db: Kysely<DB>, $: Placeholder<V>) => Compilable<R>) {
  const order: (keyof V & string)[] = [];
  let statement: CompiledQuery<R> | undefined;
  let generation = 0;
  return async (em: EntityManager, values: V): Promise<R[]> => {
    const db = em.getKysely<DB>();
    statement ??= build(db.withPlugin(propertyAliases), (key) => sql.raw(`$${String(order.includes(key) ? order.indexOf(key) + 1 : order.push(key))}`)).compile();
    // A value Kysely made a parameter itself would be numbered over a placeholder, and fixed at its first value.
    if (statement.parameters.length > 0) throw new Error(`prepared statement ${name}: every value must be a placeholder ($)`);
    const query: CompiledQuery<R> = { ...statement, parameters: order.map((key) => values[key]) };
    if (em.isInTransaction()) return (await db.executeQuery<R>(query)).rows;
    const tried = generation;
    return onPool(em, `${name}_${String(tried)}`, query).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      // A migration changed its result and PostgreSQL refused the old plan, unrun: prepared again under the next name.
      if (generation === tried) generation += 1;
      return onPool(em, `${name}_${String(generation)}`, query);
    });
  };
}

/** Runs `query` on the pool as pg's named statement `name`. */
async function onPool<R>(em: EntityManager, name: string, query: CompiledQuery<R>): Promise<R[]> {
  const pool = await nativePool(em);
  return (await pool.query<R & QueryResultRow>({ name, text: query.sql, values: [...query.parameters] })).rows;
}
