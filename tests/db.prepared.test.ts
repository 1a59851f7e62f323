// executePrepared: hot selects run as named prepared statements, answer exactly as Kysely does, and stay in a transaction.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, type CompiledQuery } from 'kysely';
import { kysely } from '../src/db/kysely.ts';
import { executePrepared } from '../src/db/prepared.ts';
import { findSessionByTokenHash } from '../src/services/auth/store.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { sha256 } from '../src/services/auth/tokens.ts';
import { findUserByKeyWithGrants } from '../src/services/users/store.ts';
import { usernameKey } from '../src/services/auth/usernameKeys.ts';
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

function userQuery(em: EntityManager, id: string): CompiledQuery<{ id: string; username: string; createdAt: Date }> {
  return kysely(em).selectFrom('users').select(['id', 'username', 'createdAt']).where('id', '=', id).compile();
}

describe('executePrepared', () => {
  it('sends the statement with a name, so PostgreSQL plans it once per connection', async () => {
    const user = await createUser(svc);
    const sent = recordStatements();
    const { rows } = await executePrepared(fresh(), userQuery(fresh(), user.id));
    expect(rows).toHaveLength(1);
    const statements = sent().filter((s) => s.text.includes('from "users"'));
    expect(statements).toEqual([{ text: expect.stringContaining('select "id", "username", "created_at"'), named: true }]);
  });

  it('answers exactly as the same query through Kysely: property names, Dates as Dates', async () => {
    const user = await createUser(svc);
    const viaKysely = await kysely(fresh()).executeQuery(userQuery(fresh(), user.id));
    const prepared = await executePrepared(fresh(), userQuery(fresh(), user.id));
    expect(prepared.rows).toEqual(viaKysely.rows);
    expect(prepared.rows[0]?.createdAt).toBeInstanceOf(Date);
    expect(prepared.rows[0]).toMatchObject({ id: user.id, username: user.username });
  });

  it('runs the same text many times on every pooled connection', async () => {
    const user = await createUser(svc);
    // More calls in flight than the pool has connections: each connection prepares once and reuses it.
    const results = await Promise.all(Array.from({ length: 60 }, () => executePrepared(fresh(), userQuery(fresh(), user.id))));
    for (const { rows } of results) expect(rows[0]?.id).toBe(user.id);
  });

  it("inside a transaction runs on the transaction's connection (it sees the transaction's own writes)", async () => {
    const user = await createUser(svc);
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
  });
});

describe('executePrepared after a migration changed what a statement returns', () => {
  it('prepares it again under a new name instead of failing (a column added under `users.*` while the instance runs)', async () => {
    const user = await createUser(svc);
    const key = usernameKey(user.username);
    // Prepared on every pooled connection first (more calls in flight than connections).
    const before = await Promise.all(Array.from({ length: 40 }, () => findUserByKeyWithGrants(fresh(), key)));
    expect(before.every((row) => row?.id === user.id)).toBe(true);
    const db = kysely(fresh());
    await sql`alter table "users" add column "prepared_test" integer`.execute(db);
    try {
      const after = await Promise.all(Array.from({ length: 40 }, () => findUserByKeyWithGrants(fresh(), key)));
      expect(after.every((row) => row?.id === user.id)).toBe(true);
    } finally {
      await sql`alter table "users" drop column "prepared_test"`.execute(db);
    }
    // Dropping it again is the same change once more. On every pooled connection, so no stale plan is left
    // for the file's other tests (which count the statements they send).
    const dropped = await Promise.all(Array.from({ length: 40 }, () => findUserByKeyWithGrants(fresh(), key)));
    expect(dropped.every((row) => row?.id === user.id)).toBe(true);
  });
});

describe('the statements that run prepared', () => {
  it('the session lookup of every authenticated request', async () => {
    const user = await createUser(svc);
    const sent = recordStatements();
    expect((await findSessionByTokenHash(fresh(), sha256(user.token)))?.userId).toBe(user.id);
    expect(sent().filter((s) => s.text.includes('"token_hash" = $1'))).toEqual([expect.objectContaining({ named: true })]);
  });

  it('the user read that starts every sign-in', async () => {
    const user = await createUser(svc);
    const sent = recordStatements();
    expect((await findUserByKeyWithGrants(fresh(), usernameKey(user.username)))?.id).toBe(user.id);
    expect(sent().filter((s) => s.text.includes('"username_key" = $1'))).toEqual([expect.objectContaining({ named: true })]);
  });
});
