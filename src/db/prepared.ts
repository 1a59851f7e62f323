// The hot reads PostgreSQL plans once per connection: pg's named statements, written with the typed Kysely view.
import type { EntityManager } from '@mikro-orm/postgresql';
import { DefaultQueryExecutor, PostgresAdapter, PostgresQueryCompiler, sql, type Compilable, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import type { Pool, QueryResultRow } from 'pg';
import { isStalePlan } from '../errors.ts';
import { kysely, propertyNames, type DB } from './kysely.ts';
import { nativePool } from './pool.ts';

/** `$('name')`: where the statement takes the value `name`, typed as that value. */
export type Placeholder<V> = <K extends keyof V & string>(name: K) => RawBuilder<V[K]>;

/**
 * `prepared('session_lookup', (db, $: Placeholder<{ tokenHash: string }>) => db.selectFrom(…).where('tokenHash', '=', $('tokenHash')))`
 * writes the statement once, `$1`, `$2` … where its values go, and returns `(em, values) => rows`. Outside a transaction it goes
 * out as pg's `{ name, text, values }`, parsed and planned once per pooled connection instead of on every call; inside one it runs
 * unnamed on the transaction's connection, whose pg client Kysely does not hand out.
 */
export function prepared<V extends Record<string, unknown>, R>(name: string, build: (db: Kysely<DB>, $: Placeholder<V>) => Compilable<R>) {
  const order: (keyof V & string)[] = [];
  let statement: CompiledQuery<R> | undefined;
  let generation = 0;
  const onPool = async (em: EntityManager, query: CompiledQuery<R>, as: number) =>
    (await named(await nativePool(em), `${name}_${String(as)}`).executeQuery<R>(query)).rows;
  return async (em: EntityManager, values: V): Promise<R[]> => {
    statement ??= build(kysely(em), (key) => sql.raw(`$${String(order.includes(key) ? order.indexOf(key) + 1 : order.push(key))}`)).compile();
    // A value Kysely made a parameter itself would be numbered over a placeholder, and fixed at its first value.
    if (statement.parameters.length > 0) throw new Error(`prepared statement ${name}: every value must be a placeholder ($)`);
    const query: CompiledQuery<R> = { ...statement, parameters: order.map((key) => values[key]) };
    if (em.isInTransaction()) return (await kysely(em).executeQuery<R>(query)).rows;
    const tried = generation;
    return onPool(em, query, tried).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      // A migration changed its result and PostgreSQL refused the old plan, unrun: prepared again under the next name.
      if (generation === tried) generation += 1;
      return onPool(em, query, generation);
    });
  };
}

/** Kysely's executor (rows get property names as any query's) on the pool, sending every statement as `name`. */
function named(pool: Pool, name: string): DefaultQueryExecutor {
  const connection = {
    executeQuery: <O>(query: CompiledQuery) => pool.query<O & QueryResultRow>({ name, text: query.sql, values: [...query.parameters] }),
    streamQuery: (): never => { throw new Error('prepared statements are not streamed'); },
  };
  return new DefaultQueryExecutor(new PostgresQueryCompiler(), new PostgresAdapter(), { provideConnection: (use) => use(connection) }, [propertyNames]);
}
