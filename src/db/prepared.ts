// The hot reads PostgreSQL plans once per connection: pg's named statements, written with the typed Kysely view.
import type { EntityManager } from '@mikro-orm/postgresql';
import { DefaultQueryExecutor, PostgresAdapter, PostgresQueryCompiler, sql, type Compilable, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import type { QueryResultRow } from 'pg';
import { isStalePlan } from '../errors.ts';
import { kysely, propertyNames, type DB } from './kysely.ts';
import { nativePool } from './pool.ts';

/** `$('name')`: where the statement takes the value `name`, typed as that value. */
export type Placeholder<V> = <K extends keyof V & string>(name: K) => RawBuilder<V[K]>;

/**
 * `prepared('session_lookup', (db, $: Placeholder<{ tokenHash: string }>) => db.selectFrom(…).where('tokenHash', '=', $('tokenHash')))`
 * writes the statement once (`$1`, `$2` … where its values go) and returns `(em, values) => rows`. Outside a transaction it goes out as
 * pg's `{ name, text, values }`, planned once per pooled connection; inside one, unnamed on the transaction's (Kysely keeps its client).
 */
export function prepared<V extends Record<string, unknown>, R>(name: string, build: (db: Kysely<DB>, $: Placeholder<V>) => Compilable<R>) {
  const order: (keyof V & string)[] = [];
  let statement: CompiledQuery<R> | undefined;
  let generation = 0;
  return async (em: EntityManager, values: V): Promise<R[]> => {
    statement ??= build(kysely(em), (key) => sql.raw(`$${String(order.includes(key) ? order.indexOf(key) + 1 : order.push(key))}`)).compile();
    // A value Kysely made a parameter itself would be numbered over a placeholder, and fixed at its first value.
    if (statement.parameters.length > 0) throw new Error(`prepared statement ${name}: every value must be a placeholder ($)`);
    const query: CompiledQuery<R> = { ...statement, parameters: order.map((key) => values[key]) };
    if (em.isInTransaction()) return (await kysely(em).executeQuery<R>(query)).rows;
    const tried = generation;
    return onPool(em, `${name}_${String(tried)}`, query).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      // A migration changed its result and PostgreSQL refused the old plan, unrun: prepared again under the next name.
      if (generation === tried) generation += 1;
      return onPool(em, `${name}_${String(generation)}`, query);
    });
  };
}

// Kysely's executor wants them, though it runs statements already compiled: made once (a compiler is not small).
const [compiler, adapter] = [new PostgresQueryCompiler(), new PostgresAdapter()];

/** Runs `query` on the pool as pg's named statement `name`, through Kysely's executor (rows get property names as any query's). */
async function onPool<R>(em: EntityManager, name: string, query: CompiledQuery<R>): Promise<R[]> {
  const pool = await nativePool(em);
  const connection = {
    executeQuery: <O>(compiled: CompiledQuery) => pool.query<O & QueryResultRow>({ name, text: compiled.sql, values: [...compiled.parameters] }),
    streamQuery: (): never => { throw new Error('prepared statements are not streamed'); },
  };
  return (await new DefaultQueryExecutor(compiler, adapter, { provideConnection: (use) => use(connection) }, [propertyNames]).executeQuery<R>(query)).rows;
}
