// Limiter stores: bounded memory store, and the PostgreSQL store's table and wiring (no database).
import { describe, it, expect } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import { RATE_LIMIT_TABLE_DDL, RATE_LIMIT_TABLE_NAME, createLimiterStores } from '../src/limits/stores.ts';
import type { PgQueryable } from '../src/limits/stores.ts';

type Query = { text: string; values?: unknown[]; name?: string };

// Answers like pg would for the store's upsert, recording every statement.
function recordingPool(): PgQueryable & { queries: Query[] } {
  const queries: Query[] = [];
  return {
    queries,
    async query(config) {
      queries.push(config);
      return { rowCount: 1, rows: [{ points: 1, expire: Date.now() + 60_000 }] };
    },
  };
}

const columns = (sql: string) =>
  [...sql.matchAll(/"?(key|points|expire)"?\s+(varchar\(255\)[^,\n]*|integer[^,\n]*|bigint)/gi)].map((m) =>
    `${m[1]} ${m[2]}`.toLowerCase().replace(/\s+/g, ' ').trim(),
  );

describe('memory store keeps memory bounded', () => {
  it('forgets a key once its duration has passed', async () => {
    const store = createLimiterStores({ kind: 'memory' }).create({ keyPrefix: 'm', points: 5, duration: 1 });
    await store.consume('k');
    expect(await store.get('k')).not.toBeNull();
    await sleep(1_050);
    expect(await store.get('k')).toBeNull();
  });

  it('refuses a duplicate key prefix, which would mix two limiters in the shared table', () => {
    const stores = createLimiterStores({ kind: 'memory' });
    stores.create({ keyPrefix: 'op:users.delete', points: 1, duration: 60 });
    expect(() => stores.create({ keyPrefix: 'op:users.delete', points: 1, duration: 60 })).toThrow(/unique/);
  });
});

describe('PostgreSQL store uses the migrated table', () => {
  it('RATE_LIMIT_TABLE_DDL has the columns rate-limiter-flexible creates', async () => {
    const pool = recordingPool();
    await new Promise<void>((resolve, reject) => {
      new RateLimiterPostgres(
        { storeClient: pool, storeType: 'pg', tableName: RATE_LIMIT_TABLE_NAME, points: 1, duration: 1 },
        (error) => (error ? reject(error) : resolve()),
      );
    });
    const libraryDdl = pool.queries[0]?.text ?? '';
    expect(columns(libraryDdl)).toHaveLength(3);
    expect(columns(RATE_LIMIT_TABLE_DDL)).toEqual(columns(libraryDdl));
  });

  it('issues no DDL and writes prefixed keys into the table', async () => {
    const pool = recordingPool();
    const store = createLimiterStores({ kind: 'postgres', pool }).create({ keyPrefix: 'op:users.delete', points: 3, duration: 60 });
    const res = await store.consume('user-1');
    expect(res.consumedPoints).toBe(1);
    expect(pool.queries).toHaveLength(1);
    expect(pool.queries[0]?.text).toContain(`INSERT INTO "${RATE_LIMIT_TABLE_NAME}"`);
    expect(pool.queries[0]?.values?.[0]).toBe('op:users.delete:user-1');
  });
});
