// MikroORM options shared by the service, the migration scripts and the tests.
import { fileURLToPath } from 'node:url';
import { defineConfig, PostgreSqlPlatform, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import pg from 'pg';
import { entities, routines } from './entities/index.ts';
import { NamingClient } from './prepared.ts';

/** rate-limiter-flexible's counters table: made by a migration, owned by the library, not by an entity. */
export const RATE_LIMIT_TABLE_NAME = 'rate_limit_counters';
export const migrationsDir = fileURLToPath(new URL('./migrations', import.meta.url));

// Rows as the entities type them: timestamps as Dates (MikroORM's parser is quicker than pg's), bigints as numbers.
const types = new pg.TypeOverrides();
const platform = new PostgreSqlPlatform();
types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, (value) => platform.parseDate(value));
types.setTypeParser(pg.types.builtins.INT8, Number);

/** The pool's size and time limits (CONTRACT §6); the defaults are the configuration's. */
export type PoolLimits = { poolMax?: number; acquireTimeoutMs?: number; statementTimeoutMs?: number | null };

export function ormOptions(clientUrl: string, { poolMax: max = 20, acquireTimeoutMs = 2000, statementTimeoutMs = 5000 }: PoolLimits = {}): Options {
  return defineConfig({
    clientUrl, entities, routines, extensions: [Migrator],
    // Committed TypeScript run by Node's type stripping, all or none; no snapshot: migration:check diffs against a migrated database.
    preferTs: true,
    migrations: { path: migrationsDir, pathTs: migrationsDir, glob: '!(*.d).ts', emit: 'ts', snapshot: false, snapshotOnMigrate: false, silent: true },
    pool: { min: 0, max, idleTimeoutMillis: 30_000 },
    // Waiting for a connection is bounded (an exhausted pool or a vanished server is a quick 503), and the server
    // cancels a statement that runs or waits too long (57014 → 503/8001); the client gives up on a silent server.
    driverOptions: {
      types,
      Client: NamingClient,
      connectionTimeoutMillis: acquireTimeoutMs,
      ...(statementTimeoutMs === null ? {} : { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs + 1000 }),
    },
    schemaGenerator: { skipTables: [RATE_LIMIT_TABLE_NAME] },
    allowGlobalContext: false,
    debug: false,
  });
}
