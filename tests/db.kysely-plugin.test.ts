// kysely(em)'s result plugin answers exactly as MikroORM's own Kysely plugin would, for every table and query shape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueryId, SelectionNode, SelectQueryNode, sql, TableNode } from 'kysely';
import type { Kysely, KyselyPlugin, RootOperationNode, UnknownRow } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { EntityResultPlugin, mikroOrmPlugin, type DB } from '../src/db/kysely.ts';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

const fresh = (): EntityManager => svc.deps.orm.em.fork();

/** A value of each column type the schema uses, as text PostgreSQL casts to the type (edge cases where they matter). */
const SAMPLES: Record<string, string> = {
  timestamptz: '2026-11-23 10:00:00.123456+00',
  timestamp: '2026-11-23 10:00:00.123',
  date: '2026-11-23',
  int8: '9007199254740993',
  int4: '2147483647',
  int2: '7',
  numeric: '1.50',
  bool: 'true',
  jsonb: '{"a": [1, {"b": null}], "big": 12345678901234567890, "s": "x"}',
  json: '{"a": 1}',
  uuid: '0b5f5a1e-9a1c-4c1e-8f3e-1c2b3a4d5e6f',
  bytea: '\\x00ff10',
  text: 'some text',
  varchar: 'some text',
  bpchar: 'x',
  _text: '{a,"b c",NULL}',
  _varchar: '{a,b}',
  _uuid: '{0b5f5a1e-9a1c-4c1e-8f3e-1c2b3a4d5e6f}',
  _int4: '{1,2}',
  float8: '1.25',
  float4: '0.5',
  inet: '127.0.0.1',
  interval: '1 day',
};

type Column = { name: string; type: string; udt: string };

async function columnsOf(em: EntityManager, table: string): Promise<Column[]> {
  // The catalogue has no query-builder form in the typed schema; a plain statement on pg_attribute.
  const { rows } = await sql<Column>`select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, t.typname as udt
      from pg_attribute a join pg_type t on t.oid = a.atttypid
     where a.attrelid = ${table}::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum`.execute(em.getKysely());
  return rows;
}

/** One row of the table's columns as the driver returns them: every column filled with a sample of its type, or all null. */
async function rawRow(em: EntityManager, columns: Column[], filled: boolean): Promise<UnknownRow> {
  const selections = columns.map((column) => {
    const sample = SAMPLES[column.udt];
    if (sample === undefined) throw new Error(`no sample for column type ${column.udt} (${column.name}): add one to SAMPLES`);
    return sql`cast(${filled ? sample : null} as ${sql.raw(column.type)}) as ${sql.ref(column.name)}`;
  });
  // Values of every column type at once, cast by PostgreSQL: there is no builder form for a FROM-less select of casts.
  const { rows } = await sql<UnknownRow>`select ${sql.join(selections)}`.execute(em.getKysely());
  const row = rows[0];
  if (!row) throw new Error('no row');
  return row;
}

async function through(plugin: KyselyPlugin, node: RootOperationNode, rows: UnknownRow[]) {
  const queryId = createQueryId();
  plugin.transformQuery({ node, queryId });
  const result = await plugin.transformResult({ queryId, result: { rows } });
  return result.rows;
}

/** Same values and the same keys in the same order. */
function expectSame(ours: UnknownRow[], theirs: UnknownRow[]) {
  expect(ours).toStrictEqual(theirs);
  expect(ours.map((row) => Object.keys(row))).toEqual(theirs.map((row) => Object.keys(row)));
}

describe('EntityResultPlugin (kysely(em)) against MikroORM’s Kysely plugin', () => {
  it('converts and renames every column of every table as MikroORM does (samples of each type, and nulls)', async () => {
    const em = fresh();
    const tables = [...svc.deps.orm.getMetadata()].map((meta) => meta.tableName);
    expect(tables.length).toBeGreaterThanOrEqual(14);
    for (const table of tables) {
      const columns = await columnsOf(em, table);
      const rows = [await rawRow(em, columns, true), await rawRow(em, columns, false)];
      // `select * from <table>`, built as a node: the table comes from the metadata, not from the typed schema.
      const node = SelectQueryNode.cloneWithSelections(SelectQueryNode.createFrom([TableNode.create(table)]), [SelectionNode.createSelectAll()]);
      const theirs = await through(mikroOrmPlugin(em), node, rows);
      const ours = await through(new EntityResultPlugin(em), node, rows);
      expectSame(ours, theirs);
      // The conversions did run (a table's timestamps arrive as Dates), so the comparison is not vacuous.
      for (const [key, value] of Object.entries(theirs[0] ?? {})) if (columns.find((c) => c.name === key)?.udt === 'timestamptz') expect(value).toBeInstanceOf(Date);
    }
  });

  it('answers joins with aliases, renamed selections, inserts, updates and deletes with RETURNING alike, on real rows', async () => {
    const user = await createUser(svc, { role: 'manager' });
    const em = fresh();
    const rollback = new Error('rollback');
    // Each run in a transaction rolled back afterwards, so both plugins see the same rows.
    const capture = async <T extends UnknownRow>(plugin: (tx: EntityManager) => KyselyPlugin, run: (db: Kysely<DB>) => Promise<T[]>) => {
      let rows: T[] = [];
      await em
        .transactional(async (tx) => {
          rows = await run(tx.getKysely<DB>().withPlugin(plugin(tx)));
          throw rollback;
        })
        .catch((error: unknown) => {
          if (error !== rollback) throw error;
        });
      return rows;
    };
    const same = async <T extends UnknownRow>(run: (db: Kysely<DB>) => Promise<T[]>) => {
      const theirs = await capture(mikroOrmPlugin, run);
      const ours = await capture((tx) => new EntityResultPlugin(tx), run);
      expectSame(ours, theirs);
      expect(ours.length).toBeGreaterThan(0);
    };
    await same((db) => db.selectFrom('sessions as s').innerJoin('users as u', 'u.id', 's.userId').selectAll().where('u.id', '=', user.id).execute());
    await same((db) =>
      db.selectFrom('sessions as s').innerJoin('users', 'users.id', 's.userId').select(['s.id', 's.expiresAt', 'users.username', 'users.createdAt as joined', 'users.role']).where('users.id', '=', user.id).execute(),
    );
    await same((db) => db.selectFrom('users').select(['id', 'mustChangePassword', 'updatedAt']).where('id', '=', user.id).execute());
    await same((db) => db.updateTable('users').set({ updatedAt: new Date('2026-11-23T10:00:00.123Z') }).where('id', '=', user.id).returningAll().execute());
    await same((db) =>
      db.insertInto('app_setting').values({ key: `plugin-test-${user.id.slice(0, 8)}`, value: 'v', createdAt: new Date('2026-11-23T10:00:00.123Z') }).returningAll().execute(),
    );
    await same((db) => db.deleteFrom('sessions').where('userId', '=', user.id).returningAll().execute());
    // Subqueries: MikroORM adds their tables to the map it matches columns against, after the outer ones.
    await same((db) => db.selectFrom('users').selectAll().where('id', 'in', db.selectFrom('sessions').select('userId')).where('id', '=', user.id).execute());
    await same((db) =>
      db
        .selectFrom('users as u')
        .select(['u.id', 'u.createdAt'])
        .select((eb) => jsonArrayFrom(eb.selectFrom('sessions as s').select(['s.id as id', 's.expiresAt as expiresAt']).whereRef('s.userId', '=', 'u.id')).as('grants'))
        .where('u.id', '=', user.id)
        .execute(),
    );
  });
});
