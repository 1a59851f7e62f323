import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

// A clock the test moves: distinct creation times, and some deliberate ties inside one millisecond.
const clock = { current: Date.now(), now: () => new Date(clock.current) };

let svc: TestService;
let writer: TestUser;
let approver: TestUser;
let observer: TestUser;

type Item = { id: string; created_at: string; status: string; risk_level: string; action_type: string };
const RISKS = ['low', 'medium', 'high', 'critical'] as const;
const ACTIONS = ['deploy:production', 'budget:increase', 'hire:agent'] as const;
/** Every seeded approval, in creation order. */
const seeded: Item[] = [];

async function seed(n: number, opts: { tie?: boolean } = {}): Promise<Item[]> {
  const made: Item[] = [];
  for (let i = 0; i < n; i++) {
    if (!opts.tie) clock.current += 1;
    const k = seeded.length;
    const item = await writer.caller.approvals.create({
      action_type: ACTIONS[k % ACTIONS.length] ?? 'deploy:production',
      title: `approval ${k}`,
      description: 'seeded',
      risk_level: RISKS[k % RISKS.length] ?? 'low',
    });
    seeded.push(item);
    made.push(item);
  }
  return made;
}

/** Newest first: created_at desc, then id desc for approvals created in the same millisecond. */
function newestFirst(items: readonly Item[]): Item[] {
  return [...items].sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
}

async function list(user: TestUser, query: string) {
  const res = await svc.app.inject({ method: 'GET', url: `/api/v1/approvals${query ? `?${query}` : ''}`, headers: user.headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ data: Item[]; pagination: { limit: number; next_cursor: string | null; has_more: boolean } }>();
}

/** Follows next_cursor to the end; `between` runs after the first page. */
async function allPages(query: string, between?: () => Promise<void>): Promise<Item[]> {
  const out: Item[] = [];
  let cursor: string | null = null;
  for (let pageNo = 0; pageNo < 100; pageNo++) {
    const page = await list(observer, [query, cursor ? `cursor=${encodeURIComponent(cursor)}` : ''].filter(Boolean).join('&'));
    expect(page.pagination.has_more).toBe(page.pagination.next_cursor !== null);
    out.push(...page.data);
    if (pageNo === 0 && between) await between();
    cursor = page.pagination.next_cursor;
    if (!cursor) return out;
  }
  throw new Error('pagination did not end');
}

beforeAll(async () => {
  svc = await startTestService({ clock, env: { RATE_LIMITS_ENABLED: 'false' } });
  [writer, approver, observer] = await Promise.all([
    createUser(svc, { role: 'manager' }),
    createUser(svc, { role: 'board_member' }),
    createUser(svc, { role: 'observer' }),
  ]);
  await seed(25);
  await seed(6, { tie: true });
  await seed(9);
  // Some decisions, so status filters have something to tell apart.
  for (const item of seeded.slice(0, 12)) {
    const verb = seeded.indexOf(item) % 2 === 0 ? 'approve' : 'reject';
    if (verb === 'approve') await approver.caller.approvals.approve({ approval_id: item.id, comment: null });
    else await approver.caller.approvals.reject({ approval_id: item.id, reason: 'no' });
    item.status = verb === 'approve' ? 'approved' : 'rejected';
  }
});
afterAll(() => svc.close());

describe('GET /api/v1/approvals', () => {
  it('answers a PaginatedResponse, newest first, to any signed-in user', async () => {
    const body = await list(observer, 'limit=200');
    expect(body).toMatchObject({ error: null, error_detail: null, success: true, pagination: { limit: 200, next_cursor: null, has_more: false } });
    expect(body.data.map((a) => a.id)).toEqual(newestFirst(seeded).map((a) => a.id));
  });

  it('pages 50 at a time by default', async () => {
    const body = await list(observer, '');
    expect(body.pagination.limit).toBe(50);
    expect(body.data).toHaveLength(seeded.length > 50 ? 50 : seeded.length);
  });

  it('is 401/1000 without credentials', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/approvals' });
    expect(res.statusCode).toBe(401);
    expect(res.json().error_detail).toMatchObject({ error_code: 1000 });
  });
});

describe('keyset pagination', () => {
  it.each([1, 4, 7, 39, 40])('pages of %i cover every approval once, in order', async (limit) => {
    const everything = await allPages(`limit=${limit}`);
    expect(everything.map((a) => a.id)).toEqual(newestFirst(seeded).map((a) => a.id));
  });

  it('has no duplicates or gaps while new approvals arrive between pages', async () => {
    const before = newestFirst(seeded).map((a) => a.id);
    let arrived: Item[] = [];
    const walked = await allPages('limit=5', async () => {
      arrived = await seed(7);
    });
    expect(walked.map((a) => a.id)).toEqual(before);
    // The newcomers are at the head of a fresh listing, not smuggled into the old walk.
    const fresh = await list(observer, `limit=${arrived.length}`);
    expect(new Set(fresh.data.map((a) => a.id))).toEqual(new Set(arrived.map((a) => a.id)));
  });

  it('also with a filter applied', async () => {
    const walked = await allPages('status=pending&risk_level=high&limit=2');
    const expected = newestFirst(seeded.filter((a) => a.risk_level === 'high' && a.status === 'pending'));
    expect(walked.map((a) => a.id)).toEqual(expected.map((a) => a.id));
  });
});

describe('filters', () => {
  it('status picks exactly the approvals in that status', async () => {
    const actual = new Map<string, string>();
    for (const item of seeded) actual.set(item.id, (await observer.caller.approvals.get({ approval_id: item.id })).status);
    expect([...actual.values()].filter((s) => s !== 'pending')).toHaveLength(12);
    for (const status of ['pending', 'approved', 'rejected', 'expired'] as const) {
      const body = await list(observer, `status=${status}&limit=200`);
      const expected = newestFirst(seeded.filter((a) => actual.get(a.id) === status));
      expect(body.data.map((a) => a.id), status).toEqual(expected.map((a) => a.id));
      expect(body.data.every((a) => a.status === status)).toBe(true);
    }
    expect((await list(observer, 'status=approved&limit=200')).data).toHaveLength(6);
    expect((await list(observer, 'status=rejected&limit=200')).data).toHaveLength(6);
  });

  it('risk_level and action_type match exactly, alone and combined', async () => {
    for (const risk of RISKS) {
      const body = await list(observer, `risk_level=${risk}&limit=200`);
      expect(body.data.map((a) => a.id)).toEqual(newestFirst(seeded.filter((a) => a.risk_level === risk)).map((a) => a.id));
    }
    const body = await list(observer, `action_type=${encodeURIComponent('budget:increase')}&risk_level=medium&limit=200`);
    const expected = newestFirst(seeded.filter((a) => a.action_type === 'budget:increase' && a.risk_level === 'medium'));
    expect(expected.length).toBeGreaterThan(0);
    expect(body.data.map((a) => a.id)).toEqual(expected.map((a) => a.id));
  });

  it('an action type nobody used lists nothing', async () => {
    const body = await list(observer, 'action_type=deploy:staging');
    expect(body.data).toEqual([]);
    expect(body.pagination).toEqual({ limit: 50, next_cursor: null, has_more: false });
  });

  it('the tRPC procedure returns {items, pagination}', async () => {
    const page = await observer.caller.approvals.list({ status: 'approved', limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.pagination).toMatchObject({ limit: 2, has_more: true, next_cursor: expect.any(String) });
  });
});
