// Statements marked to run prepared go out by name on any connection, answer exactly as Kysely does, and survive a migration.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, type CompiledQuery } from 'kysely';
import { kysely } from '../src/db/kysely.ts';
import { nativePool } from '../src/db/pool.ts';
import { executePrepared } from '../src/db/prepared.ts';
import { preparedNameOf, preparedText } from '../src/db/statementNames.ts';
import { toApiError } from '../src/errors.ts';
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

/** A user read marked to run prepared, as compiledStatement marks what it builds. */
function userQuery(em: EntityManager, id: string): CompiledQuery<{ id: string; username: string; createdAt: Date }> {
  const query = kysely(em).selectFrom('users').select(['id', 'username', 'createdAt']).where('id', '=', id).compile();
  return { ...query, sql: preparedText(query.sql, 0) };
}

describe('statement names', () => {
  it('a marked text carries a PostgreSQL name (at most 63 bytes), one per text and generation', () => {
    const name = preparedNameOf(preparedText('select 1', 0));
    expect(name).toMatch(/^agent_org_[0-9a-f]{32}_0$/);
    expect(Buffer.byteLength(name ?? '')).toBeLessThanOrEqual(63);
    expect(preparedNameOf(preparedText('select 1', 1))).not.toBe(name);
    expect(preparedNameOf(preparedText('select 2', 0))).not.toBe(name);
    expect(preparedNameOf('select 1')).toBeUndefined();
    expect(preparedNameOf('/* agent_org_ unterminated')).toBeUndefined();
  });

  it('the pool’s clients send a marked text under its name, and any other text as it is', async () => {
    const user = await createUser(svc);
    const pool = await nativePool(svc.deps.orm);
    const text = 'select "username" from "users" where "id" = $1';
    const sent = recordStatements();
    const marked = await pool.query<{ username: string }>(preparedText(text, 0), [user.id]);
    const plain = await pool.query<{ username: string }>(text, [user.id]);
    expect(marked.rows).toEqual([{ username: user.username }]);
    expect(plain.rows).toEqual(marked.rows);
    expect(sent().filter((s) => s.text.includes(text))).toEqual([
      { text, named: true },
      { text, named: false },
    ]);
  });
});

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

  it("inside a transaction runs on the transaction's connection (it sees the transaction's own writes), by name too", async () => {
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
    expect(sent().filter((s) => s.text.includes('"token_hash" = $1'))).toEqual([expect.objectContaining({ named: true }), expect.objectContaining({ named: true })]);
  });
});

describe('a prepared statement after a migration changed what it returns', () => {
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

  it('inside a transaction, the call that meets the stale plan fails as retryable (503/8001) and the next one succeeds', async () => {
    const user = await createUser(svc);
    const key = usernameKey(user.username);
    const inTransaction = () => fresh().transactional((tx) => findUserByKeyWithGrants(tx, key));
    // Prepared on every pooled connection first: each of these holds its own connection until it ends.
    const before = await Promise.all(Array.from({ length: 40 }, inTransaction));
    expect(before.every((row) => row?.id === user.id)).toBe(true);
    const db = kysely(fresh());
    await sql`alter table "users" add column "prepared_test" integer`.execute(db);
    try {
      // A transaction is aborted by the refusal, so it cannot be retried inside: the request says "retry".
      const after = await Promise.allSettled(Array.from({ length: 40 }, inTransaction));
      const refused = after.flatMap((result) => (result.status === 'rejected' ? [toApiError(result.reason)] : []));
      expect(refused.length).toBeGreaterThan(0);
      for (const error of refused) expect({ status: error.status, code: error.errorCode, retryAfter: error.retryAfter }).toEqual({ status: 503, code: 8001, retryAfter: 1 });
      expect((await inTransaction())?.id).toBe(user.id);
    } finally {
      await sql`alter table "users" drop column "prepared_test"`.execute(db);
    }
    // As above: no stale plan is left for the file's other tests.
    await Promise.allSettled(Array.from({ length: 40 }, inTransaction));
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
