// The hot reads PostgreSQL plans once per connection: pg's named statements, written with the typed Kysely view.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AliasNode, CamelCasePlugin, ColumnNode, IdentifierNode, InsertQueryNode, ReferenceNode, SelectionNode, SelectQueryNode, sql, UpdateQueryNode, type Compilable, type CompiledQuery } from 'kysely';
import type { Kysely, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RawBuilder, RootOperationNode, UnknownRow } from 'kysely';
import pg, { type QueryResultRow } from 'pg';
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

/** The name each prepared statement's text goes out under (NamingClient), whichever connection sends it. */
const names = new Map<string, string>();

/**
 * pg's client (the pool's, db/ormConfig.ts), sending a text that prepared() wrote as its named statement: on any
 * pooled connection and on a transaction's, which Kysely keeps to itself and sends plain texts on. Installed as
 * a property, not an override, so pg's seven overloads of query() need not be restated; pg's own is read at
 * call time (tests spy on it).
 */
export class NamingClient extends pg.Client {}
Object.defineProperty(NamingClient.prototype, 'query', {
  value(this: pg.Client, text: unknown, ...rest: unknown[]): unknown {
    const name = typeof text === 'string' ? names.get(text) : undefined;
    const args = name === undefined ? [text, ...rest] : [{ name, text, values: rest[0] }, ...rest.slice(1)];
    return Reflect.apply(Reflect.get(pg.Client.prototype, 'query'), this, args);
  },
});

/**
 * `prepared('session_lookup', (db, $: Placeholder<{ tokenHash: string }>) => db.selectFrom(…).where('tokenHash', '=', $('tokenHash')))`
 * writes the statement once (`$1`, `$2` … where its values go) and returns `(em, values) => rows`. It goes out as pg's named statement,
 * planned once per connection: on the transaction's connection inside one, straight on the pool outside (cheaper than the ORM's path).
 * Rows come back from PostgreSQL as they are, under property names (PropertyAliases), so a statement names its columns (no `selectAll`).
 */
export function prepared<V extends Record<string, unknown>, R>(name: string, build: (db: Kysely<DB>, $: Placeholder<V>) => Compilable<R>) {
  const order: (keyof V & string)[] = [];
  let statement: CompiledQuery<R> | undefined;
  let generation = 0;
  return async (em: EntityManager, values: V): Promise<R[]> => {
    const db = em.getKysely<DB>();
    if (!statement) {
      statement = build(db.withPlugin(propertyAliases), (key) => sql.raw(`$${String(order.includes(key) ? order.indexOf(key) + 1 : order.push(key))}`)).compile();
      names.set(statement.sql, `${name}_0`);
    }
    // A value Kysely made a parameter itself would be numbered over a placeholder, and fixed at its first value.
    if (statement.parameters.length > 0) throw new Error(`prepared statement ${name}: every value must be a placeholder ($)`);
    const query: CompiledQuery<R> = { ...statement, parameters: order.map((key) => values[key]) };
    const run = async () => (em.isInTransaction() ? (await db.executeQuery<R>(query)).rows : (await (await nativePool(em)).query<R & QueryResultRow>(query.sql, [...query.parameters])).rows);
    const tried = generation;
    return run().catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      // A migration changed its result and PostgreSQL refused the old plan, unrun: prepared again under the next name.
      if (generation === tried) names.set(query.sql, `${name}_${String((generation += 1))}`);
      // Inside a transaction the refusal aborted it: the request ends as retryable (503), the next one uses the new name.
      if (em.isInTransaction()) throw error;
      return run();
    });
  };
}
