// Closing the database while work is still opening connections: the close neither hangs nor leaves a connection behind.
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { kysely } from '../src/db/kysely.ts';
import { createTestDatabase } from './helpers/database.ts';

const silent = { debug: () => {}, info: () => {}, warn: () => {} };

async function backendsOf(url: string): Promise<number> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return rows[0]?.n ?? -1;
  } finally {
    await admin.end();
  }
}

/** The backends still there once those whose connections were closed have had time to exit (2 s at most). */
async function backendsAfterExit(url: string): Promise<number> {
  let left = await backendsOf(url);
  for (const until = Date.now() + 2000; left > 0 && Date.now() < until; left = await backendsOf(url)) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return left;
}

describe('closing the database', () => {
  it('while connections are being opened (a handler whose client left during shutdown) completes and leaves none open', async () => {
    const url = await createTestDatabase();
    const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' });
    // Several rounds: each starts queries on a cold pool, so new connections are mid-handshake when the close begins.
    for (let round = 0; round < 5; round++) {
      const db = await openDatabase(config, silent, { migrate: false });
      const em = db.orm.em.fork();
      const inFlight = Array.from({ length: 8 }, () => sql`select pg_sleep(0.05)`.execute(kysely(em)).then(() => 'answered', () => 'refused'));
      await new Promise((resolve) => setImmediate(resolve));
      const closed = await Promise.race([db.close().then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 8000, 'still waiting'))]);
      expect(closed, `round ${round}`).toBe('closed');
      // Whatever was under way either ran or was refused; none of it hangs.
      expect(new Set(await Promise.all(inFlight)).size).toBeGreaterThan(0);
      // A backend leaves pg_stat_activity a moment after its client closed the connection (its process exits
      // asynchronously): none may remain once that moment has passed.
      expect(await backendsAfterExit(url), `round ${round}`).toBe(0);
    }
  }, 90_000);
});
