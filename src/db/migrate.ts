// Applies pending migrations under a PostgreSQL advisory lock, so several instances may boot at once.
import type { MikroORM } from '@mikro-orm/postgresql';
import { nativePool } from './pool.ts';

// Any constant shared by every instance of this service.
const MIGRATION_LOCK_KEY = '4703580514342707815';

export async function migrateWithLock(orm: MikroORM): Promise<string[]> {
  const pool = await nativePool(orm);
  // A session-level lock needs one dedicated connection for its whole life.
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await orm.migrator.up();
      return applied.map((m) => m.name);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    client.release();
  }
}
