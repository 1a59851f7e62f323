import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { migrationsDir } from '../src/db/ormConfig.ts';
import { withDatabase } from './helpers/globalSetup.ts';

let url: string;
beforeAll(async () => {
  // An EMPTY database (not a clone of the migrated template): the instances below must build the schema.
  const serverUrl = inject('pgServerUrl');
  const name = `empty_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  url = withDatabase(serverUrl, name);
});

const opened: Database[] = [];
afterAll(async () => {
  await Promise.all(opened.map((db) => db.close()));
});

async function query<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('booting several instances at once against one empty database', () => {
  it('all succeed, and every migration is applied exactly once', async () => {
    const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' });
    const appliedBy: string[][] = [];
    const boots = Array.from({ length: 4 }, (_, i) =>
      openDatabase(config, {
        debug: () => {},
        warn: () => {},
        info: (message) => {
          if (message.startsWith('applied migrations: ')) appliedBy[i] = message.slice('applied migrations: '.length).split(', ');
        },
      }),
    );
    const results = await Promise.allSettled(boots);
    for (const result of results) if (result.status === 'fulfilled') opened.push(result.value);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);

    const files = (await fs.readdir(migrationsDir)).filter((f) => /^Migration\d+_.*\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, '')).sort();
    expect(files.length).toBeGreaterThan(0);
    // The advisory lock lets exactly one instance migrate; the others find nothing left to do.
    const migrators = appliedBy.filter((names) => names.length > 0);
    expect(migrators).toHaveLength(1);
    expect([...(migrators[0] ?? [])].sort()).toEqual(files);

    const rows = await query<{ name: string }>('select name from mikro_orm_migrations order by name');
    expect(rows.map((r) => r.name.replace(/\.ts$/, ''))).toEqual(files);
  });

  it('leaves a usable schema behind (every instance can query it)', async () => {
    for (const db of opened) {
      const rows = await db.orm.em.fork().getConnection().execute<{ n: string }[]>('select count(*) as n from app_setting');
      expect(rows).toHaveLength(1);
    }
  });
});
