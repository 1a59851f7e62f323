// The hot statements PostgreSQL plans once per connection: pg's named statements, written with the typed Kysely view.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AliasNode, CamelCasePlugin, ColumnNode, IdentifierNode, InsertQueryNode, ReferenceNode, SelectionNode, SelectQueryNode, sql, UpdateQueryNode } from 'kysely';
import type { Compilable, CompiledQuery, Kysely, PluginTransformQueryArgs, RawBuilder, RootOperationNode } from 'kysely';
import pg from 'pg';
import { isStalePlan } from '../errors.ts';
import type { DB } from './kysely.ts';

/** `$('name')`: where the statement takes the value `name`, typed as that value. */
export type Placeholder<V> = <K extends keyof V & string>(name: K) => RawBuilder<V[K]>;

/** kysely.ts's `propertyNames` done in SQL: each column a statement selects or returns is aliased to its property name, so no row is copied to rename its keys. */
class PropertyAliases extends CamelCasePlugin {
  override transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = super.transformQuery(args);
    const aliased = (selections: readonly SelectionNode[]) => selections.map((selection) => this.#aliased(selection));
    if (SelectQueryNode.is(node) && node.selections) return { ...node, selections: aliased(node.selections) };
    const returning = (InsertQueryNode.is(node) || UpdateQueryNode.is(node)) && node.returning;
    return returning ? { ...node, returning: { ...returning, selections: aliased(returning.selections) } } : node;
  }

  #aliased({ selection: s }: SelectionNode): SelectionNode {
    const name = AliasNode.is(s) ? IdentifierNode.is(s.alias) && s.alias.name : ColumnNode.is(s) ? s.column.name : ReferenceNode.is(s) && ColumnNode.is(s.column) && s.column.column.name;
    // `table.*` has no one name to give: its columns would come back under their SQL names.
    if (!name) throw new Error('a prepared statement selects (or returns) named columns or aliased expressions');
    return SelectionNode.create(AliasNode.create(AliasNode.is(s) ? s.node : s, IdentifierNode.create(this.camelCase(name))));
  }
}

const propertyAliases = new PropertyAliases({ maintainNestedObjectKeys: true });
const names = new Map<string, string>();

// The pool's pg client (ormConfig.ts): Kysely sends texts unnamed, so one prepared() wrote goes out under its name here. Set as
// a property, so pg's overloads of query() need not be restated; pg's own is read at call time.
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
 * compiles the statement once (`$1`, `$2` … where its values go) and returns `(em, values) => rows`, run in the EntityManager's
 * transaction when there is one. A statement names its columns (no `selectAll`: see PropertyAliases).
 */
export function prepared<V extends Record<string, unknown>, R>(name: string, build: (db: Kysely<DB>, $: Placeholder<V>) => Compilable<R>) {
  const order: (keyof V & string)[] = [];
  let statement: CompiledQuery<R> | undefined;
  let generation = 0;
  return async (em: EntityManager, values: V): Promise<R[]> => {
    const db = em.getKysely<DB>();
    if (!statement) {
      const compiled = build(db.withPlugin(propertyAliases), (key) => sql.raw(`$${String(order.includes(key) ? order.indexOf(key) + 1 : order.push(key))}`)).compile();
      // A value Kysely made a parameter itself would be numbered over a placeholder, and fixed at its first value.
      if (compiled.parameters.length > 0) throw new Error(`prepared statement ${name}: every value must be a placeholder ($)`);
      names.set(compiled.sql, `${name}_0`);
      statement = compiled;
    }
    const query: CompiledQuery<R> = { ...statement, parameters: order.map((key) => values[key]) };
    const tried = generation;
    const result = await db.executeQuery<R>(query).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      // A migration changed the result's type and PostgreSQL refused the plan, unrun: the next name prepares it anew (a transaction ends as 503).
      if (generation === tried) names.set(query.sql, `${name}_${String((generation += 1))}`);
      if (em.isInTransaction()) throw error;
      return db.executeQuery<R>(query);
    });
    return result.rows;
  };
}
