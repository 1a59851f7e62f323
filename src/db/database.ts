// Opens the database the configuration names (or the embedded one), migrated and ready; closes it again.
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase, type Log } from './embedded.ts';
import { ormOptions } from './ormConfig.ts';
import { nativePool, untilPoolIdle } from './pool.ts';

export type Database = { orm: MikroORM; url: string; embedded: EmbeddedDatabase | null; close(): Promise<void> };
const MIGRATION_LOCK_KEY = '4703580514342707815'; // any constant shared by every instance of this service

/** Applies pending migrations under a PostgreSQL advisory lock, so several instances may boot at once. */
export async function migrateWithLock(orm: MikroORM): Promise<string[]> {
  // A session-level lock needs one connection for its whole life, and ends with it.
  const client = await (await nativePool(orm)).connect();
  try {
    await client.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    return (await orm.migrator.up()).map((migration) => migration.name);
  } finally {
    client.release(true);
  }
}

export async function openDatabase(config: Config, log: Log, opts: { migrate?: boolean } = {}): Promise<Database> {
  const embedded = config.databaseUrl ? null : await startEmbeddedPostgres(path.join(config.dataDir, 'pg'), log);
  const url = config.databaseUrl ?? embedded?.url ?? '';
  const limits = { poolMax: config.dbPoolMax, acquireTimeoutMs: config.dbAcquireTimeoutMs, statementTimeoutMs: config.statementTimeoutMs };
  try {
    if (opts.migrate !== false) {
      // Migrations, and the wait for another instance's lock, may outlast a request's statement budget: own connections, none.
      const migrator = await MikroORM.init(ormOptions(url, { ...limits, poolMax: 2, statementTimeoutMs: null }));
      const applied = await migrateWithLock(migrator).finally(() => migrator.close(true));
      if (applied.length > 0) log.info(`applied migrations: ${applied.join(', ')}`);
    }
    const orm = await MikroORM.init(ormOptions(url, limits));
    // Taken while connected: asking the ORM for it at close time would reconnect.
    const pool = await nativePool(orm);
    // Work in flight (a handler whose client went away) finishes first: see untilPoolIdle.
    const close = () => untilPoolIdle(pool, config.statementTimeoutMs + 1000).then(() => orm.close(true)).then(() => embedded?.stop());
    return { orm, url, embedded, close };
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
}
