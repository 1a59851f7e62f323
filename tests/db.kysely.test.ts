// The typed Kysely view: property names in queries and rows, column names in SQL, values as the entities type them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { isoText, kysely, propertyNames } from '../src/db/kysely.ts';
import { startTestService, type TestService } from './helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

const fresh = () => svc.deps.orm.em.fork();

describe('property and column names', () => {
  it('every column of every entity is its property in snake_case, so the renaming goes both ways', async () => {
    const db = kysely(fresh());
    const mismatched: string[] = [];
    for (const meta of svc.deps.orm.getMetadata()) {
      for (const prop of meta.props) {
        const [field] = prop.fieldNames;
        const query = db.selectNoFrom(db.dynamic.ref(prop.name)).compile();
        const { rows } = await propertyNames.transformResult({ queryId: query.queryId, result: { rows: [{ [field ?? '']: true }] } });
        if (query.sql !== `select "${field ?? ''}"` || rows[0]?.[prop.name] !== true) mismatched.push(`${meta.className}.${prop.name} ↔ ${String(field)}`);
      }
    }
    expect(mismatched).toEqual([]);
  });
});

describe('values as the entities type them', () => {
  it('timestamps are Dates, bigints and counts numbers, JSON keeps its keys, arrays are arrays', async () => {
    const db = kysely(fresh());
    const data = { snake_key: 1, camelKey: { nested_key: [true, null, 'text'] } };
    const occurredAt = new Date('2026-11-27T10:00:00.123Z');
    const event = await db
      .insertInto('events')
      .values({ type: 'user.deleted', channel: 'users', occurredAt, actor: null, audienceUserId: null, data })
      .returning(['rowId', 'occurredAt', 'data'])
      .executeTakeFirstOrThrow();
    expect(event).toEqual({ rowId: expect.any(Number), occurredAt, data });
    const userId = randomUUID();
    await db.insertInto('user_org_roles').values({ userId, role: 'department_admin', scopedDepartments: ['b', 'a, "quoted"'], createdAt: occurredAt }).execute();
    const grant = await db.selectFrom('user_org_roles').select(['scopedDepartments', 'createdAt']).where('userId', '=', userId).executeTakeFirstOrThrow();
    expect(grant).toEqual({ scopedDepartments: ['b', 'a, "quoted"'], createdAt: occurredAt });
    const count = await db
      .selectFrom('user_org_roles')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('userId', '=', userId)
      .executeTakeFirstOrThrow();
    expect(count).toEqual({ n: 1 });
  });
});

describe('timestamps as the API writes them', () => {
  it('isoText gives what toISOString gives (UTC, milliseconds), whatever the session time zone', async () => {
    const instants = ['2026-11-21T10:00:00.000Z', '2026-03-29T01:30:00.007Z', '1999-12-31T23:59:59.999Z', '2000-02-29T12:00:00.010Z'].map((at) => new Date(at));
    await fresh().transactional(async (tx) => {
      const db = kysely(tx);
      // An offset that is neither whole hours nor the server's: a missing conversion to UTC could not pass.
      await sql`set local time zone 'Asia/Kathmandu'`.execute(db);
      for (const at of instants) {
        const row = await db.selectNoFrom((eb) => isoText(eb.val(at)).as('text')).executeTakeFirstOrThrow();
        expect(row.text).toBe(at.toISOString());
      }
    });
  });
});
