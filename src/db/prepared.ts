// Runs a compiled statement marked to run prepared (statementNames.ts): on the transaction's connection, or straight on the pool.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import type { Pool, QueryResultRow } from 'pg';
import { EntityResultPlugin, kysely, type DB } from './kysely.ts';
import { nativePool } from './pool.ts';

/**
 * Runs a compiled statement marked by preparedText (statementNames.ts), which the pool's clients send as a
 * named prepared statement. Inside a transaction it runs on the transaction's connection like any query of
 * the ORM. Outside one it goes straight to the pool: the ORM's connection handling costs more than a small
 * statement. Rows are converted by the same plugin as any Kysely query (Dates, property names).
 */
export async function executePrepared<R>(em: EntityManager, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  if (em.isInTransaction()) return transactionKysely(em).executeQuery(query);
  const prepared = await preparedKysely(em);
  return prepared.withPlugin(new EntityResultPlugin(em)).executeQuery(query);
}

// By transaction: wrapping one in a plugin builds a new Kysely transaction object (~10 µs), once is enough.
const byTransaction = new WeakMap<object, Kysely<DB>>();

function transactionKysely(em: EntityManager): Kysely<DB> {
  const transaction = em.getKysely<DB>();
  let wrapped = byTransaction.get(transaction);
  if (!wrapped) byTransaction.set(transaction, (wrapped = kysely(em)));
  return wrapped;
}

// By pool: the ORM's connection makes a new one if it is ever closed and opened again.
const byPool = new WeakMap<Pool, Kysely<DB>>();

async function preparedKysely(em: EntityManager): Promise<Kysely<DB>> {
  const pool = await nativePool(em);
  let prepared = byPool.get(pool);
  if (!prepared) {
    prepared = new Kysely<DB>({ dialect: poolDialect(pool) });
    byPool.set(pool, prepared);
  }
  return prepared;
}

function poolDialect(pool: Pool) {
  const connection = new PooledStatements(pool);
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    // Only single statements come here: a transaction goes through the ORM's own connection (above).
    beginTransaction: async () => Promise.reject(new Error('pooled statements run outside transactions')),
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    // The pool is the ORM's; it closes it.
    destroy: async () => {},
  };
  return {
    createDriver: () => driver,
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createAdapter: () => new PostgresAdapter(),
    createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
  };
}

/** Each query on whichever pooled connection is free (pool.query): one round trip, no connection held. */
class PooledStatements implements DatabaseConnection {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  // Callers read `rows` (compiledStatement returns only those), so pg's result passes as it is.
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#pool.query<R & QueryResultRow>(query.sql, [...query.parameters]);
  }

  streamQuery(): AsyncIterableIterator<never> {
    throw new Error('pooled statements are not streamed');
  }
}
