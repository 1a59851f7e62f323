// Where limiter counters live: one factory for rate-limiter-flexible stores, in memory or in PostgreSQL.
import { RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { RATE_LIMIT_TABLE_NAME } from '../db/ormConfig.ts';

export { RATE_LIMIT_TABLE_NAME };

/**
 * The table RateLimiterPostgres reads and writes, for a migration to create (the store runs with
 * `tableCreated: true`, so it never issues DDL itself). Columns copied from rate-limiter-flexible 11.4.0
 * `lib/RateLimiterPostgres.js` `_getCreateTableStmt()`; its upsert is `INSERT … VALUES (key, points, expire)
 * ON CONFLICT(key)`, so names, order and the primary key must stay exactly as they are. `expire` is epoch
 * milliseconds, NULL = never. The index is ours: `clearExpired` runs `DELETE … WHERE expire < $1`.
 * UNLOGGED is ours too: every limited request writes a counter, and a logged table would make each of
 * those commits wait for a WAL flush; a crash of the database server merely resets the counters.
 */
export const RATE_LIMIT_TABLE_DDL = `create unlogged table "${RATE_LIMIT_TABLE_NAME}" (
  "key" varchar(255) primary key,
  "points" integer not null default 0,
  "expire" bigint
);
create index "${RATE_LIMIT_TABLE_NAME}_expire_index" on "${RATE_LIMIT_TABLE_NAME}" ("expire");`;

/** What RateLimiterPostgres calls on its client (a pg Pool, e.g. the ORM's): `query({ name, text, values })`. */
export interface PgQueryable {
  query(config: { text: string; values?: unknown[]; name?: string }): Promise<unknown>;
}

export type LimiterStoreConfig =
  | { readonly kind: 'memory' }
  | { readonly kind: 'postgres'; readonly pool: PgQueryable; readonly tableName?: string };

export interface StoreOptions {
  /** Namespaces one limiter's keys; must be unique per factory because PostgreSQL stores share a table. */
  readonly keyPrefix: string;
  readonly points: number;
  /** Seconds a key lives after its first hit; > 0 (0 would mean "never expires"). */
  readonly duration: number;
}

export interface LimiterStores {
  readonly kind: LimiterStoreConfig['kind'];
  create(options: StoreOptions): RateLimiterAbstract;
}

export function createLimiterStores(config: LimiterStoreConfig): LimiterStores {
  const prefixes = new Set<string>();
  let sweeperScheduled = false;

  const create = (options: StoreOptions): RateLimiterAbstract => {
    const { keyPrefix, points, duration } = options;
    if (keyPrefix.length === 0 || prefixes.has(keyPrefix)) {
      throw new Error(`limiter key prefix must be non-empty and unique, got ${JSON.stringify(keyPrefix)}`);
    }
    if (!(duration > 0)) throw new RangeError(`limiter store duration must be > 0 s, got ${duration}`);
    prefixes.add(keyPrefix);

    if (config.kind === 'memory') {
      // Memory stays bounded: RateLimiterMemory's MemoryStorage.set() arms an unref'd setTimeout of
      // `duration` that deletes the key, and incrby() on a live key does not re-arm it, so a key lives
      // at most `duration` seconds after its first hit whatever the traffic.
      return new RateLimiterMemory({ keyPrefix, points, duration });
    }

    // Every RateLimiterPostgres with clearExpiredByTimeout arms its own 5-minute sweep, and each sweep
    // deletes expired rows of the whole table (not just its prefix), so one per table is enough.
    const clearExpiredByTimeout = !sweeperScheduled;
    sweeperScheduled = true;
    return new RateLimiterPostgres({
      storeClient: config.pool,
      // Any value other than knex/sequelize/typeorm/pool makes the store call query() on the client itself.
      storeType: 'pg',
      tableName: config.tableName ?? RATE_LIMIT_TABLE_NAME,
      tableCreated: true,
      clearExpiredByTimeout,
      keyPrefix,
      points,
      duration,
    });
  };

  return { kind: config.kind, create };
}
