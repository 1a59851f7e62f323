// The `pg` pool behind the ORM, for what needs a connection of its own (advisory locks, the limiter's store, COPY).
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';

export function nativePool(source: MikroORM | EntityManager): Promise<Pool> {
  return ('em' in source ? source.em : source).getConnection().getNativeClient();
}

/**
 * Resolves once no connection of `pool` is checked out or being opened (or after `withinMs`): Kysely's PostgresDriver.destroy()
 * drops its pool before pool.end(), so a connection still being opened then is never released, and pool.end() never resolves.
 */
export async function untilPoolIdle(pool: Pool, withinMs: number): Promise<void> {
  for (const until = Date.now() + withinMs; pool.totalCount > pool.idleCount && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
