// Hot compiled statements run as named prepared statements: PostgreSQL parses and plans each once per connection.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import type { Pool, QueryResultRow } from 'pg';
import { EntityResultPlugin, kysely, type DB } from './kysely.ts';
import { nativePool } from './pool.ts';

/**
 * Runs a statement compiled once per process (`query.compile()` through `kysely(em)`, or
 * compiledStatement) as a named prepared statement on the ORM's pool. Kysely sends every query
 * unnamed, so PostgreSQL parses and plans it on each call; for the session lookup (a join plus a JSON
 * subquery) that was ~270 µs of PostgreSQL's CPU per authenticated request against ~180 µs to execute
 * it (bench/RESULTS.md). Rows are converted by the same
 * plugin as any Kysely query (Dates, property names). Inside a transaction the statement must run on the
 * transaction's connection: there it is an ordinary query.
 */
export async function executePrepared<R>(em: EntityManager, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  if (em.isInTransaction()) return kysely(em).executeQuery(query);
  const prepared = await preparedKysely(em);
  return prepared.withPlugin(new EntityResultPlugin(em)).executeQuery(query);
}

// By pool: the ORM's connection makes a new one if it is ever closed and opened again.
const byPool = new WeakMap<Pool, Kysely<DB>>();

async function preparedKysely(em: EntityManager): Promise<Kysely<DB>> {
  const pool = await nativePool(em);
  let prepared = byPool.get(pool);
  if (!prepared) {
    prepared = new Kysely<DB>({ dialect: preparedDialect(pool) });
    byPool.set(pool, prepared);
  }
  return prepared;
}

function preparedDialect(pool: Pool) {
  const connection = new PreparedStatements(pool);
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    // Only single statements come here: a transaction goes through the ORM's own connection (above).
    beginTransaction: async () => Promise.reject(new Error('prepared statements run outside transactions')),
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

/** Each query on any pooled connection, under a name derived from its text (pg prepares it on first use per connection). */
class PreparedStatements implements DatabaseConnection {
  readonly #pool: Pool;
  readonly #names = new Map<string, string>();
  /** How often a text was prepared again under a new name (see executeQuery). */
  readonly #generations = new Map<string, number>();

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.#run<R>(query);
    } catch (error) {
      if (!isStalePlan(error)) throw error;
      // A migration changed what the statement returns (a column added under `users.*`, say) while this
      // instance ran: PostgreSQL refuses the plan prepared before it, on every connection that has it. Under
      // a new name each connection prepares it again. PostgreSQL refuses the stale plan before running
      // anything, so running the statement once more is safe, a write too.
      this.#generations.set(query.sql, (this.#generations.get(query.sql) ?? 0) + 1);
      this.#names.delete(query.sql);
      return this.#run<R>(query);
    }
  }

  // Callers read `rows` (compiledStatement returns only those), so pg's result passes as it is.
  async #run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#pool.query<R & QueryResultRow>({ name: this.#nameOf(query.sql), text: query.sql, values: [...query.parameters] });
  }

  streamQuery(): AsyncIterableIterator<never> {
    throw new Error('prepared statements are not streamed');
  }

  // Names are at most 63 bytes in PostgreSQL; one text, one name, on every connection and instance.
  #nameOf(sql: string): string {
    let name = this.#names.get(sql);
    if (name === undefined) {
      name = `agent_org_${createHash('sha256').update(sql).digest('hex').slice(0, 32)}_${String(this.#generations.get(sql) ?? 0)}`;
      this.#names.set(sql, name);
    }
    return name;
  }
}

/** PostgreSQL's refusal to run a prepared plan whose result columns changed since it was prepared. */
function isStalePlan(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === '0A000' && /cached plan must not change result type/.test(error.message);
}
