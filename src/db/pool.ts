// The `pg` pool behind the ORM, for the few things that need a raw connection (advisory locks, limiter store).
import { PostgreSqlConnection, type MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';

export async function nativePool(orm: MikroORM): Promise<Pool> {
  const connection = orm.em.getConnection();
  if (!(connection instanceof PostgreSqlConnection)) throw new Error('agent-org needs the PostgreSQL driver');
  return connection.getNativeClient();
}
