// The `pg` pool behind the ORM, for the few things that need a raw connection (advisory locks, limiter store, prepared statements, COPY).
import { PostgreSqlConnection, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';

/** The pool of an ORM, or of the ORM an EntityManager belongs to (the same pool). */
export async function nativePool(source: MikroORM | EntityManager): Promise<Pool> {
  const connection = 'em' in source ? source.em.getConnection() : source.getConnection();
  if (!(connection instanceof PostgreSqlConnection)) throw new Error('agent-org needs the PostgreSQL driver');
  return connection.getNativeClient();
}

/**
 * Resolves once no connection of `pool` is checked out or being opened (or after `withinMs`). Kysely's
 * PostgresDriver.destroy() (0.29) drops its pool before pool.end(), so a connection still being opened then
 * fails in acquireConnection(), is never released, and pool.end() never resolves. An idle pool has none.
 */
export async function untilPoolIdle(pool: Pool, withinMs: number): Promise<void> {
  for (const until = Date.now() + withinMs; pool.totalCount > pool.idleCount && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
