// The hot reads go out as pg's named statements, answer exactly as Kysely does, and survive a migration that changes them.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { kysely } from '../src/db/kysely.ts';
import { prepared, type Placeholder } from '../src/db/prepared.ts';
import { findSessionByTokenHash } from '../src/services/auth/store.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { sha256 } from '../src/services/auth/tokens.ts';
import { findUserWithGrants, userPage } from '../src/services/users/store.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { recordStatements } from './helpers/statements.ts';
import { createUser } from './helpers/users.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());
afterEach(() => vi.restoreAllMocks());

const fresh = (): EntityManager => svc.deps.orm.em.fork();

const userById = prepared('test_user_by_id', (db, $: Placeholder<{ id: string }>) =>
  db.selectFrom('users').select(['id', 'username', 'mustChangePassword', 'createdAt']).where('id', '=', $('id')),
);

describe('a prepared statement', () => {
  it('goes out under its name, with its values, on whichever pooled connection is free', async () => {
    const user = await createUser(svc);
    const sent = recordStatements();
    // More calls in flight than the pool has connections: each connection prepares it once and reuses it.
    const results = await Promise.all(Array.from({ length: 60 }, () => userById(fresh(), { id: user.id })));
    for (const rows of results) expect(rows.map((row) => row.id)).toEqual([user.id]);
    const statements = sent().filter((s) => s.text.includes('from "users" where "id" = $1'));
    expect(statements).toHaveLength(60);
    expect(statements.every((s) => s.named)).toBe(true);
  });

  it('answers exactly as the same query through Kysely: property names, Dates as Dates', async () => {
    const user = await createUser(svc);
    const [row] = await userById(fresh(), { id: user.id });
    const viaKysely = await kysely(fresh()).selectFrom('users').select(['id', 'username', 'mustChangePassword', 'createdAt']).where('id', '=', user.id).execute();
    expect([row]).toEqual(viaKysely);
    expect(row?.createdAt).toBeInstanceOf(Date);
    expect(row).toMatchObject({ id: user.id, username: user.username, mustChangePassword: false });
  });

  it("inside a transaction runs on the transaction's connection, so it sees the transaction's own writes", async () => {
    const user = await createUser(svc);
    await fresh()
      .transactional(async (tx) => {
        await kysely(tx).updateTable('users').set({ username: 'renamed_in_tx' }).where('id', '=', user.id).execute();
        expect(await userById(tx, { id: user.id })).toMatchObject([{ username: 'renamed_in_tx' }]);
        expect(await userById(fresh(), { id: user.id })).toMatchObject([{ username: user.username }]);
        throw new Error('roll back');
      })
      .catch((error: unknown) => {
        if (!(error instanceof Error) || error.message !== 'roll back') throw error;
      });
  });

  it('refuses a value that is not one of its placeholders (it would be fixed at its first value)', async () => {
    const fixed = prepared('test_fixed_value', (db, $: Placeholder<{ id: string }>) =>
      db.selectFrom('users').select('id').where('id', '=', $('id')).where('role', '=', 'ceo'),
    );
    const user = await createUser(svc);
    await expect(fixed(fresh(), { id: user.id })).rejects.toThrow(/placeholder/);
  });

  it('names each column under its property in the statement itself, and refuses `table.*` (its columns would keep their SQL names)', async () => {
    const user = await createUser(svc);
    const sent = recordStatements();
    const [row] = await userById(fresh(), { id: user.id });
    expect(Object.keys(row ?? {})).toEqual(['id', 'username', 'mustChangePassword', 'createdAt']);
    expect(sent().find((s) => s.text.includes('from "users" where "id" = $1'))?.text).toContain('"must_change_password" as "mustChangePassword"');
    const everything = prepared('test_select_all', (db, $: Placeholder<{ id: string }>) => db.selectFrom('users').selectAll().where('id', '=', $('id')));
    await expect(everything(fresh(), { id: user.id })).rejects.toThrow(/named columns/);
  });
  it('a write returns its RETURNING list under property names too, and refuses `returning *`', async () => {
    const user = await createUser(svc);
    const rename = prepared('test_update_returning', (db, $: Placeholder<{ id: string; flag: boolean }>) =>
      db.updateTable('users').set({ mustChangePassword: $('flag') }).where('id', '=', $('id')).returning(['id', 'mustChangePassword']),
    );
    expect(await rename(fresh(), { id: user.id, flag: true })).toEqual([{ id: user.id, mustChangePassword: true }]);
    const everything = prepared('test_update_returning_all', (db, $: Placeholder<{ id: string }>) => db.updateTable('users').set({ mustChangePassword: sql.lit(false) }).where('id', '=', $('id')).returningAll());
    await expect(everything(fresh(), { id: user.id })).rejects.toThrow(/named columns/);
  });
});

describe('after a migration changed what a prepared statement returns', () => {
  it('is prepared again under a new name instead of failing (the type of a column it selects changed while the instance runs)', async () => {
    const user = await createUser(svc);
    const page = () => userPage(fresh(), null, 1_000);
    const found = (rows: { id: string }[]) => rows.some((row) => row.id === user.id);
    // Prepared on every pooled connection first (more calls in flight than connections).
    expect((await Promise.all(Array.from({ length: 40 }, page))).every(found)).toBe(true);
    const db = kysely(fresh());
    await sql`alter table "users" alter column "username" type text`.execute(db);
    try {
      expect((await Promise.all(Array.from({ length: 40 }, page))).every(found)).toBe(true);
    } finally {
      await sql`alter table "users" alter column "username" type varchar(128)`.execute(db);
    }
    // Changing it back is the same change once more.
    expect((await Promise.all(Array.from({ length: 40 }, page))).every(found)).toBe(true);
  });
});

describe('the statements that run prepared', () => {
  it('every statement of an approval\'s create and decision, in their transactions and the publication after, goes out named', async () => {
    const [requester, board] = await Promise.all([createUser(svc, { role: 'pair_programmer' }), createUser(svc, { role: 'board_member' })]);
    const body = { action_type: 'deploy:production', title: 'Ship', description: 'Roll out', risk_level: 'high' };
    // Once before counting: the session lookups' first use on a connection is the same named statement.
    const warm = await svc.app.inject({ method: 'POST', url: '/api/v1/approvals', headers: requester.headers, payload: body });
    expect(warm.statusCode).toBe(201);
    const sent = recordStatements();
    const created = await svc.app.inject({ method: 'POST', url: '/api/v1/approvals', headers: requester.headers, payload: body });
    const id = created.json<{ data: { id: string } }>().data.id;
    const decided = await svc.app.inject({ method: 'POST', url: `/api/v1/approvals/${id}/approve`, headers: board.headers, payload: { comment: null } });
    expect([created.statusCode, decided.statusCode]).toEqual([201, 200]);
    await svc.deps.events.publish();
    const statements = sent().filter((s) => !/^(begin|commit|rollback)\b/i.test(s.text) && !s.text.includes('pgboss'));
    expect(statements.filter((s) => /insert into "approvals"|update "approvals"|insert into "events"|events_publish/.test(s.text)).length).toBeGreaterThanOrEqual(5);
    expect(statements.filter((s) => !s.named).map((s) => s.text)).toEqual([]);
  });

  it('the session lookup of every authenticated request', async () => {
    const user = await createUser(svc);
    const sent = recordStatements();
    expect((await findSessionByTokenHash(fresh(), sha256(user.token)))?.userId).toBe(user.id);
    expect(sent().filter((s) => s.text.includes('"token_hash" = $1'))).toEqual([expect.objectContaining({ named: true })]);
  });

  it('the session lookup answers with the user and its grants, as the user read does', async () => {
    const user = await createUser(svc);
    await kysely(fresh()).insertInto('user_org_roles').values({ userId: user.id, role: 'department_admin', scopedDepartments: ['b', 'a'], createdAt: new Date() }).execute();
    const session = await findSessionByTokenHash(fresh(), sha256(user.token));
    const stored = await findUserWithGrants(fresh(), user.id);
    expect(session).toMatchObject({ userId: user.id, username: user.username, role: user.role, mustChangePassword: false, revokedAt: null });
    expect(session?.expiresAt).toBeInstanceOf(Date);
    expect(session?.grants).toEqual([{ role: 'department_admin', scopedDepartments: ['b', 'a'] }]);
    expect(stored?.grants).toEqual(session?.grants);
  });

  it('both pages of the users list', async () => {
    await createUser(svc);
    await createUser(svc);
    const sent = recordStatements();
    const [first] = await userPage(fresh(), null, 1);
    expect(first).toBeDefined();
    if (first) expect(await userPage(fresh(), { createdAt: new Date(first.createdAt), id: first.id }, 1)).toHaveLength(1);
    const pages = sent().filter((s) => s.text.includes('from "users"'));
    expect(pages).toHaveLength(2);
    expect(pages.every((s) => s.named)).toBe(true);
  });

  it('inside a transaction too: named on the transaction\'s connection, where it sees the transaction', async () => {
    const user = await createUser(svc);
    const sent = recordStatements();
    await fresh()
      .transactional(async (tx) => {
        const issued = await issueSession({ em: tx, clock: svc.deps.clock, config: svc.deps.config }, user.id, { ip: '127.0.0.1', userAgent: 'vitest' });
        // Not committed yet: only this transaction's connection can see the session.
        expect((await findSessionByTokenHash(tx, sha256(issued.accessToken)))?.id).toBe(issued.sessionId);
        expect(await findSessionByTokenHash(fresh(), sha256(issued.accessToken))).toBeUndefined();
        throw new Error('roll back');
      })
      .catch((error: unknown) => {
        if (!(error instanceof Error) || error.message !== 'roll back') throw error;
      });
    expect(sent().filter((s) => s.text.includes('"token_hash" = $1'))).toEqual([
      expect.objectContaining({ named: true }),
      expect.objectContaining({ named: true }),
    ]);
  });
});
