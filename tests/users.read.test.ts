import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { encodeCursor } from '../src/services/pagination.ts';
import { usernameKey, usernameSkeletonKey } from '../src/services/auth/usernameKeys.ts';
import type { TestService } from './helpers/service.ts';
import { createUser, startWithCeoAndObserver, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
let observer: TestUser;
beforeAll(async () => {
  ({ svc, ceo, observer } = await startWithCeoAndObserver());
});
afterAll(() => svc.close());

const USER_KEYS = ['created_at', 'id', 'kind', 'mfa_enabled', 'must_change_password', 'org_roles', 'role', 'scoped_departments', 'updated_at', 'username'];
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type UserJson = { id: string; created_at: string; updated_at: string } & Record<string, unknown>;
type PageJson = { data: UserJson[]; pagination: { limit: number; next_cursor: string | null; has_more: boolean } };

const get = (url: string, user: TestUser | null = observer, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: { ...(user ? user.headers : {}), ...headers } });

/** Inserts users straight into the table; `createdAt` lets several share one timestamp. */
async function seedUsers(count: number, opts: { createdAt?: Date; prefix?: string } = {}): Promise<string[]> {
  const em = svc.deps.orm.em.fork();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    const name = `${opts.prefix ?? 'seed'}_${randomUUID().slice(0, 8)}`;
    const at = opts.createdAt ?? new Date();
    await kysely(em)
      .insertInto('users')
      .values({
        id,
        username: name,
        usernameKey: usernameKey(name),
        usernameSkeleton: usernameSkeletonKey(name),
        passwordHash: 'not-a-hash',
        role: 'observer',
        mustChangePassword: false,
        createdAt: at,
        updatedAt: at,
      })
      .execute();
    ids.push(id);
  }
  return ids;
}

async function allIdsInOrder(): Promise<string[]> {
  const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('users').select('id').orderBy('createdAt').orderBy('id').execute();
  return rows.map((r) => r.id);
}

async function walk(limit: number, user: TestUser = observer): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await get(`/users?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, user);
    expect(res.statusCode).toBe(200);
    const body = res.json<PageJson>();
    pages++;
    ids.push(...body.data.map((u) => u.id));
    expect(body.pagination.has_more).toBe(body.pagination.next_cursor !== null);
    cursor = body.pagination.next_cursor;
  } while (cursor !== null && pages < 100);
  return { ids, pages };
}

describe('GET /api/v1/users', () => {
  it('needs authentication (401/1000), in both error formats', async () => {
    const envelope = await get('/users', null);
    expect(envelope.statusCode).toBe(401);
    expect(envelope.json()).toMatchObject({ data: null, success: false, error_detail: { error_code: 1000 } });
    const problem = await get('/users', null, { accept: 'application/problem+json' });
    expect(problem.statusCode).toBe(401);
    expect(problem.headers['content-type']).toBe('application/problem+json');
    expect(problem.json()).toMatchObject({ status: 401, error_code: 1000, error_category: 'auth' });
  });

  it('is open to any authenticated user and sends a PaginatedResponse of UserResponse without secrets', async () => {
    const res = await get('/users');
    expect(res.statusCode).toBe(200);
    const body = res.json<PageJson>();
    expect(body).toMatchObject({ error: null, error_detail: null, success: true, pagination: { limit: 50 } });
    expect(body.data.length).toBeGreaterThanOrEqual(2);
    for (const user of body.data) {
      expect(Object.keys(user).sort()).toEqual(USER_KEYS);
      expect(user.created_at).toMatch(ISO_MS);
      expect(user.updated_at).toMatch(ISO_MS);
    }
    expect(res.body).not.toMatch(/argon2|password_hash|token/);
  });

  it("lists each user's timestamps exactly as reading that user gives them (UTC, milliseconds)", async () => {
    // Earlier than every other user here, so all on the first page.
    const instants = ['2001-03-25T01:59:59.999Z', '2001-10-28T00:00:00.007Z', '2001-01-01T00:00:00.000Z'];
    const seeded = await Promise.all(instants.map(async (at) => ({ at, id: (await seedUsers(1, { createdAt: new Date(at) }))[0] ?? '' })));
    const listed = (await get('/users?limit=200')).json<PageJson>().data;
    for (const { at, id } of seeded) {
      const one = (await get(`/users/${id}`)).json<{ data: UserJson }>().data;
      expect([one.created_at, one.updated_at]).toEqual([at, at]);
      const inList = listed.find((user) => user.id === id);
      expect([inList?.created_at, inList?.updated_at]).toEqual([at, at]);
    }
  });

  it('walks every user exactly once in (created_at, id) order across pages', async () => {
    await seedUsers(7);
    const expected = await allIdsInOrder();
    const { ids, pages } = await walk(3);
    expect(ids).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 3));
  });

  it('breaks created_at ties by id, so users sharing a timestamp are neither skipped nor repeated', async () => {
    const tied = await seedUsers(5, { createdAt: new Date('2020-01-01T00:00:00.000Z'), prefix: 'tie' });
    const { ids } = await walk(2);
    // Other tests may have seeded users before 2020; the tied five are next to each other, by id.
    const first = ids.indexOf([...tied].sort()[0] ?? '');
    expect(ids.slice(first, first + 5)).toEqual([...tied].sort());
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has no duplicates or gaps over three pages while users are inserted concurrently', async () => {
    const before = await allIdsInOrder();
    const limit = Math.ceil(before.length / 3);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pageNo = 0; pageNo < 3; pageNo++) {
      const [res]: [Awaited<ReturnType<typeof get>>, ...unknown[]] = await Promise.all([
        get(`/users?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`),
        ceo.caller.users.create({ username: `late_${randomUUID().slice(0, 8)}`, password: 'a long enough password', role: 'observer' }),
        seedUsers(2, { prefix: 'late' }),
        // Rows that sort before the position already read (a transaction that committed late): an offset
        // would shift and repeat rows; a keyset position does not move.
        pageNo > 0 ? seedUsers(2, { prefix: 'early', createdAt: new Date('2019-01-01T00:00:00.000Z') }) : [],
      ]);
      expect(res.statusCode).toBe(200);
      const body = res.json<PageJson>();
      seen.push(...body.data.map((u) => u.id));
      cursor = body.pagination.next_cursor;
    }
    // The rest of the list, now that nothing is inserted any more: a user created while the first page was
    // being read may be on it (it is the newest), pushing older ones further down.
    while (cursor !== null) {
      const body: PageJson = (await get(`/users?limit=${limit}&cursor=${cursor}`)).json<PageJson>();
      seen.push(...body.data.map((u) => u.id));
      cursor = body.pagination.next_cursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    // Every user that existed before the walk is listed once, in order.
    const existed = new Set(before);
    expect(seen.filter((id) => existed.has(id))).toEqual(before);
  });

  it('past the last page answers an empty page without a cursor', async () => {
    const { ids } = await walk(200);
    const last = ids.at(-1)!;
    const row = await kysely(svc.deps.orm.em.fork()).selectFrom('users').select('createdAt').where('id', '=', last).executeTakeFirstOrThrow();
    const cursor = encodeCursor(svc.deps.secret, 'users', [row.createdAt.toISOString(), last]);
    const res = await get(`/users?cursor=${cursor}`);
    expect(res.json()).toMatchObject({ data: [], pagination: { next_cursor: null, has_more: false } });
  });

  it.each(['0', '201', 'abc', '1.5', '1e2', '-1'])('limit=%s is 400/2001', async (limit) => {
    const res = await get(`/users?limit=${limit}`, observer, { accept: 'application/problem+json' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error_code: 2001 });
    expect(res.json().detail).toMatch(/^query\.limit/);
  });

  it('an empty limit counts as absent (default 50)', async () => {
    const res = await get('/users?limit=');
    expect(res.statusCode).toBe(200);
    expect(res.json().pagination.limit).toBe(50);
  });

  it('a tampered, foreign-list, malformed-position or oversized cursor is 400/2001', async () => {
    const first = await get('/users?limit=1');
    const good: string = first.json().pagination.next_cursor;
    const [body, sig] = good.split('.');
    const forged = Buffer.from(JSON.stringify({ l: 'users', p: ['2000-01-01T00:00:00.000Z', randomUUID()] })).toString('base64url');
    const cursors = [
      `${forged}.${sig}`,
      `${body}.${sig}x`,
      'garbage',
      encodeCursor(svc.deps.secret, 'approvals', ['2000-01-01T00:00:00.000Z', randomUUID()]),
      encodeCursor(svc.deps.secret, 'users', ['not a time', 'not an id']),
      encodeCursor(svc.deps.secret, 'users', [1, 2]),
      'a'.repeat(513),
    ];
    for (const cursor of cursors) {
      const res = await get(`/users?cursor=${encodeURIComponent(cursor)}`);
      expect(res.statusCode, cursor).toBe(400);
      expect(res.json().error_detail.error_code).toBe(2001);
    }
  });

  it('is users.list for tRPC callers, returning {items, pagination}', async () => {
    // More users than one page of two, whichever tests ran before.
    await seedUsers(2);
    const result = await observer.caller.users.list({ limit: 2 });
    expect(result.items).toHaveLength(2);
    expect(result.pagination).toMatchObject({ limit: 2, has_more: true, next_cursor: expect.any(String) });
    const next = await observer.caller.users.list({ cursor: result.pagination.next_cursor });
    expect(next.items[0]!.id).not.toBe(result.items[1]!.id);
  });
});

describe('GET /api/v1/users/{user_id}', () => {
  it('answers the UserResponse with a strong ETag that is stable while nothing changes', async () => {
    const res = await get(`/users/${ceo.id}`);
    expect(res.statusCode).toBe(200);
    const user = res.json<{ data: UserJson }>().data;
    expect(Object.keys(user).sort()).toEqual(USER_KEYS);
    expect(user).toMatchObject({ id: ceo.id, username: ceo.username, role: 'ceo', must_change_password: false, org_roles: [], scoped_departments: [] });
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    expect((await get(`/users/${ceo.id}`)).headers.etag).toBe(res.headers.etag);
    expect(await observer.caller.users.get({ user_id: ceo.id })).toEqual(user);
  });

  it('changes the ETag when the user changes (org roles included)', async () => {
    const target = await createUser(svc, { role: 'manager' });
    const before = (await get(`/users/${target.id}`)).headers.etag;
    await ceo.caller.users.grantOrgRole({ user_id: target.id, role: 'viewer' });
    const after = await get(`/users/${target.id}`);
    expect(after.json().data.org_roles).toEqual(['viewer']);
    expect(after.headers.etag).not.toBe(before);
  });

  it('is 404/3000 for an unknown id, a non-UUID id and a 128-character id', async () => {
    for (const id of [randomUUID(), 'nope', 'x'.repeat(128)]) {
      const res = await get(`/users/${id}`, observer, { accept: 'application/problem+json' });
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toMatchObject({ status: 404, error_code: 3000, error_category: 'not_found' });
    }
  });

  it('is 400/2001 for a 129-character id', async () => {
    const res = await get(`/users/${'x'.repeat(129)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
    expect(res.json().error).toMatch(/^path\.user_id/);
  });

  it('needs authentication (401/1000)', async () => {
    const res = await get(`/users/${ceo.id}`, null);
    expect(res.statusCode).toBe(401);
  });
});
