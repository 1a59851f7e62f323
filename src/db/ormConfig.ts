// MikroORM options shared by the service, the migration scripts and the tests.
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities, routines } from './entities/index.ts';
import { RATE_LIMIT_TABLE_NAME } from '../limits/stores.ts';

export const migrationsDir = fileURLToPath(new URL('./migrations', import.meta.url));

export function ormOptions(clientUrl: string, overrides: Partial<Options> = {}): Options {
  return defineConfig({
    clientUrl,
    entities,
    routines,
    extensions: [Migrator],
    // Migrations are committed TypeScript run by Node's type stripping; no snapshot file, so
    // migration:check diffs the entities against a database the migrations built.
    preferTs: true,
    migrations: {
      path: migrationsDir,
      pathTs: migrationsDir,
      glob: '!(*.d).ts',
      emit: 'ts',
      snapshot: false,
      snapshotOnMigrate: false,
      transactional: true,
      allOrNothing: true,
      silent: true,
    },
    pool: { min: 0, max: 20, idleTimeoutMillis: 30_000 },
    // Every query fails fast instead of hanging when the database disappears (readyz must answer in 2 s).
    driverOptions: { connectionTimeoutMillis: 2000 },
    // The limiter table belongs to rate-limiter-flexible (created by a hand-written migration), not to an entity.
    schemaGenerator: { skipTables: [RATE_LIMIT_TABLE_NAME] },
    allowGlobalContext: false,
    debug: false,
    ...overrides,
  });
}
