// compiledStatement: a statement built once runs with each call's values, converted as the ORM converts them.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { compiledStatement } from '../src/db/compiled.ts';
import { kysely } from '../src/db/kysely.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { statementsDuring } from './helpers/statements.ts';
import { createUser } from './helpers/users.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());
afterEach(() => vi.restoreAllMocks());

const fresh = (): EntityManager => svc.deps.orm.em.fork();

/** Runs `work` in a transaction that is rolled back afterwards: nothing it writes stays. */
async function rolledBack(work: (tx: EntityManager) => Promise<void>): Promise<void> {
  const done = new Error('roll back');
  await expect(
    fresh().transactional(async (tx) => {
      await work(tx);
      throw done;
    }),
  ).rejects.toBe(done);
}

const userById = compiledStatement((em, v: { id: string }) => kysely(em).selectFrom('users').select(['id', 'username', 'createdAt']).where('id', '=', v.id));

describe('compiledStatement', () => {
  it('runs with each call’s values and answers as the same query through Kysely (property names, Dates)', async () => {
    const [a, b] = [await createUser(svc), await createUser(svc)];
    const viaKysely = await kysely(fresh()).selectFrom('users').select(['id', 'username', 'createdAt']).where('id', '=', b.id).execute();
    expect(await userById(fresh(), { id: a.id })).toMatchObject([{ id: a.id, username: a.username }]);
    const rows = await userById(fresh(), { id: b.id });
    expect(rows).toEqual(viaKysely);
    expect(rows[0]?.createdAt).toBeInstanceOf(Date);
  });

  it('runs prepared outside a transaction, and inside one on the transaction’s connection (seeing its writes), prepared too', async () => {
    const user = await createUser(svc);
    const sent = await statementsDuring(async () => void (await userById(fresh(), { id: user.id })));
    expect(sent.filter((s) => s.text.includes('from "users"'))).toEqual([{ text: expect.any(String), named: true }]);
    const sentInTransaction = await statementsDuring(() =>
      rolledBack(async (tx) => {
        await kysely(tx).updateTable('users').set({ username: 'renamed_in_tx' }).where('id', '=', user.id).execute();
        expect(await userById(tx, { id: user.id })).toMatchObject([{ username: 'renamed_in_tx' }]);
      }),
    );
    expect(sentInTransaction.filter((s) => s.text.includes('from "users"'))).toEqual([{ text: expect.any(String), named: true }]);
    expect(await userById(fresh(), { id: user.id })).toMatchObject([{ username: user.username }]);
  });

  it('converts a JSON column’s value as the ORM does: an object is stored as JSON, null stays SQL NULL', async () => {
    const user = await createUser(svc);
    const insertKey = compiledStatement((em, v: { key: string; response: unknown; now: Date }) =>
      kysely(em)
        .insertInto('idempotency_keys')
        .values({ userId: user.id, key: v.key, operation: 'test.op', fingerprint: 'f', response: v.response, createdAt: v.now, leaseUntil: v.now, expiresAt: v.now }),
    );
    await rolledBack(async (tx) => {
      const now = new Date();
      await insertKey(tx, { key: 'object', response: { a: [1, 'x'], b: null }, now });
      await insertKey(tx, { key: 'null', response: null, now });
      const rows = await kysely(tx)
        .selectFrom('idempotency_keys')
        .select(['key', 'response', sql<boolean>`response is null`.as('isSqlNull')])
        .where('userId', '=', user.id)
        .orderBy('key')
        .execute();
      expect(rows).toEqual([
        { key: 'null', response: null, isSqlNull: true },
        { key: 'object', response: { a: [1, 'x'], b: null }, isSqlNull: false },
      ]);
    });
  });

  it('keeps what the statement itself writes (constants) next to the values', async () => {
    const user = await createUser(svc);
    const renamed = compiledStatement((em, v: { id: string }) =>
      kysely(em)
        .selectFrom('users')
        .select(['id', sql<string>`${'fixed'}`.as('label'), sql<string>`${'"quoted, not JSON'}`.as('quoted')])
        .where('id', '=', v.id),
    );
    expect(await renamed(fresh(), { id: user.id })).toEqual([{ id: user.id, label: 'fixed', quoted: '"quoted, not JSON' }]);
  });

  it('refuses, on first use, a value that shaped or was computed into the statement', async () => {
    const user = await createUser(svc);
    const computed = compiledStatement((em, v: { id: string; limit: number }) => kysely(em).selectFrom('users').select('id').where('id', '=', v.id).limit(Number(v.limit) + 1));
    await expect(computed(fresh(), { id: user.id, limit: 1 })).rejects.toThrow(/"limit" was used to build the statement/);
    const shaped = compiledStatement((em, v: { name: string }) => kysely(em).selectFrom('users').select('id').where('username', '=', v.name.toUpperCase()));
    await expect(shaped(fresh(), { name: 'X' })).rejects.toThrow(/"name" was used to build the statement/);
  });
});
