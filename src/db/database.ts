// Opens the database the configuration names (or the embedded one), migrated and ready; closes it again.
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './embedded.ts';
import { ormOptions } from './ormConfig.ts';
import { nativePool, untilPoolIdle } from './pool.ts';

export type Database = { orm: MikroORM; url: string; embedded: EmbeddedDatabase | null; close(): Promise<void> };

const MIGRATION_LOCK_KEY = '4703580514342707815'; // any constant shared by every instance of this service

/** Applies pending migrations under a PostgreSQL advisory lock, so several instances may boot at once. */
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

export async function openDatabase(config: Config, log: { debug(msg: string): void; info(msg: string): void; warn(msg: string): void }, opts: { migrate?: boolean } = {}): Promise<Database> {
  const embedded = config.databaseUrl ? null : await startEmbeddedPostgres(path.join(config.dataDir, 'pg'), log);
  const url = config.databaseUrl ?? embedded?.url ?? '';
  const limits = { poolMax: config.dbPoolMax, acquireTimeoutMs: config.dbAcquireTimeoutMs, statementTimeoutMs: config.statementTimeoutMs };
  try {
    if (opts.migrate !== false) {
      // Migrations (and waiting for another instance's migration lock) may outlast a request's statement
      // budget, so they run on a short-lived connection of their own without it.
      const migrator = await MikroORM.init(ormOptions(url, { ...limits, poolMax: 2, statementTimeoutMs: null }));
      try {
        const applied = await migrateWithLock(migrator);
        if (applied.length > 0) log.info(`applied migrations: ${applied.join(', ')}`);
      } finally {
        await migrator.close(true);
      }
    }
    const orm = await MikroORM.init(ormOptions(url, limits));
    // Taken now, while connected: asking the ORM for it at close time would try to reconnect.
    const pool = await nativePool(orm);
    const close = async () => {
      // Work still in flight (a handler whose client went away) finishes first: a connection being opened
      // while the ORM closes is never returned, and the close would wait for it forever (see pool.ts).
      await untilPoolIdle(pool, config.statementTimeoutMs + 1000);
      await orm.close(true);
      await embedded?.stop();
    };
    return { orm, url, embedded, close };
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
}
