// MikroORM options shared by the service, the migration scripts and the tests.
import { fileURLToPath } from 'node:url';
import { defineConfig, PostgreSqlPlatform, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import pg from 'pg';
import { entities, routines } from './entities/index.ts';
import { NamingClient } from './prepared.ts';

/** rate-limiter-flexible's counters table: created by a migration, owned by the library, not by an entity. */
export const RATE_LIMIT_TABLE_NAME = 'rate_limit_counters';

export const migrationsDir = fileURLToPath(new URL('./migrations', import.meta.url));

// Rows as the entities type them, parsed by pg: timestamps as Dates (by MikroORM's parseDate, quicker than pg's), bigints as numbers.
const rowTypes = new pg.TypeOverrides();
const platform = new PostgreSqlPlatform();
rowTypes.setTypeParser(pg.types.builtins.TIMESTAMPTZ, (value) => platform.parseDate(value));
rowTypes.setTypeParser(pg.types.builtins.INT8, Number);

/** The pool's size and time limits (CONTRACT §6); the defaults are the configuration's. */
export type PoolLimits = { poolMax: number; acquireTimeoutMs: number; statementTimeoutMs: number | null };
export const DEFAULT_POOL_LIMITS: PoolLimits = { poolMax: 20, acquireTimeoutMs: 2000, statementTimeoutMs: 5000 };

export function ormOptions(clientUrl: string, limits: PoolLimits = DEFAULT_POOL_LIMITS, overrides: Partial<Options> = {}): Options {
  return defineConfig({
    clientUrl,
    entities,
    routines,
    extensions: [Migrator],
    // Migrations are committed TypeScript run by Node's type stripping, each in its transaction and all or none
    // (MikroORM's defaults); no snapshot file, so migration:check diffs the entities against a database the migrations built.
    preferTs: true,
    migrations: { path: migrationsDir, pathTs: migrationsDir, glob: '!(*.d).ts', emit: 'ts', snapshot: false, snapshotOnMigrate: false, silent: true },
    pool: { min: 0, max: limits.poolMax, idleTimeoutMillis: 30_000 },
    driverOptions: {
      types: rowTypes,
      // Sends prepared()'s statements by name, in transactions too.
      Client: NamingClient,
      // Waiting for a free or a new connection is bounded: an exhausted pool or a vanished server is a quick 503.
      connectionTimeoutMillis: limits.acquireTimeoutMs,
      // The server cancels a statement that runs (or waits for a lock) too long: 57014 → 503/8001. A server that
      // stops answering altogether cannot cancel anything; the client gives up a little later.
      ...(limits.statementTimeoutMs === null ? {} : { statement_timeout: limits.statementTimeoutMs, query_timeout: limits.statementTimeoutMs + 1000 }),
    },
    // The limiter table belongs to rate-limiter-flexible (created by a hand-written migration), not to an entity.
    schemaGenerator: { skipTables: [RATE_LIMIT_TABLE_NAME] },
    allowGlobalContext: false,
    debug: false,
    ...overrides,
  });
}
