// GET /audit and tRPC audit.list (CONTRACT §4.13): who may read, newest first, keyset pages, every filter on an index, bad filters.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEntry } from '../src/contracts/audit.ts';
import { nativePool } from '../src/db/pool.ts';
import { auditPageQuery, type AuditPosition, type AuditQuery } from '../src/services/audit/store.ts';
import { at, iso, RECENT, seedAuditEntries } from './helpers/audit.ts';

const H = 3600_000;
const D = 24 * H;
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
let board: TestUser;
let doc: OpenApiDocument;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  [ceo, board] = await Promise.all([createUser(svc, { role: 'ceo' }), createUser(svc, { role: 'board_member' })]);
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(() => svc.close());

const PROBLEM = { accept: 'application/problem+json' };
const newActor = () => `seed_${randomBytes(4).toString('hex')}`;
const get = (query: string, user: TestUser = ceo, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'GET', url: `/api/v1/audit${query}`, headers: { ...user.headers, ...headers } });

/** Every entry a query finds, page after page, with the pages' sizes. */
async function walk(query: string, limit: number): Promise<{ entries: AuditEntry[]; pages: number[] }> {
  const entries: AuditEntry[] = [];
  const pages: number[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(`?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.statusCode).toBe(200);
    const body = res.json<{ data: AuditEntry[]; pagination: { next_cursor: string | null; has_more: boolean } }>();
    entries.push(...body.data.map((e) => AuditEntry.parse(e)));
    pages.push(body.data.length);
    cursor = body.pagination.next_cursor;
    expect(body.pagination.has_more).toBe(cursor !== null);
  } while (cursor !== null);
  return { entries, pages };
}

describe('who may read the audit log', () => {
  it('the CEO and board members; every other role gets 403/1001', async () => {
    expect((await get('')).statusCode).toBe(200);
    expect((await get('', board)).statusCode).toBe(200);
    for (const role of ['manager', 'pair_programmer', 'observer'] as const) {
      const user = await createUser(svc, { role });
      const res = await get('', user, PROBLEM);
      expect(res.statusCode, role).toBe(403);
      expect(res.json().error_code).toBe(1001);
      await expect(user.caller.audit.list({})).rejects.toMatchObject({ code: 'FORBIDDEN' });
    }
  });

  it('an API key needs the scope audit:read, and then still its user’s role', async () => {
    const issue = async (user: TestUser, scopes: string[]) =>
      (await svc.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: user.headers, payload: { name: 'auditor', scopes } })).json().data as { secret: string };
    const reader = await issue(ceo, ['audit:read']);
    const other = await issue(ceo, ['approvals:read']);
    const managerKey = await issue(await createUser(svc, { role: 'manager' }), ['audit:read']);
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/audit', headers: { authorization: `Bearer ${reader.secret}` } })).statusCode).toBe(200);
    const lacking = await svc.app.inject({ method: 'GET', url: '/api/v1/audit', headers: { authorization: `Bearer ${other.secret}`, ...PROBLEM } });
    expect([lacking.statusCode, lacking.json().error_code, lacking.json().detail]).toEqual([403, 1001, 'the API key lacks the scope audit:read']);
    const wrongRole = await svc.app.inject({ method: 'GET', url: '/api/v1/audit', headers: { authorization: `Bearer ${managerKey.secret}`, ...PROBLEM } });
    expect([wrongRole.statusCode, wrongRole.json().error_code]).toEqual([403, 1001]);
  });
});

describe('order and pages', () => {
  it('newest first by time, then by id; keyset pages hold every entry once', async () => {
    const actor = newActor();
    // Pairs of entries share a timestamp, so the id decides between them.
    await seedAuditEntries(svc, { count: 4, actor, start: at(1 * D), stepMs: 1000 });
    await seedAuditEntries(svc, { count: 4, actor, start: at(1 * D), stepMs: 1000 });
    const { entries, pages } = await walk(`actor=${actor}`, 3);
    expect(pages).toEqual([3, 3, 2]);
    const keys = entries.map((e) => [e.occurred_at, Number(e.id)] as const);
    const sorted = [...keys].sort((a, b) => (a[0] === b[0] ? b[1] - a[1] : a[0] < b[0] ? 1 : -1));
    expect(keys).toEqual(sorted);
    expect(new Set(entries.map((e) => e.id)).size).toBe(8);
    expect(entries[0]?.occurred_at).toBe(iso(1 * D + 3000));
  });

  it('the entry shape: a decimal id, ISO times with milliseconds, and the recorded fields', async () => {
    const actor = newActor();
    await seedAuditEntries(svc, { count: 1, actor, types: ['auth.logout'], start: at(2 * D + 6 * H + 7 * 60_000 + 8009) });
    const res = await get(`?actor=${actor}`);
    expectResponseConforms(doc, 'GET', '/api/v1/audit', res);
    expect(res.json().data).toEqual([
      {
        id: expect.stringMatching(/^\d+$/),
        occurred_at: iso(2 * D + 6 * H + 7 * 60_000 + 8009),
        type: 'auth.logout',
        actor,
        actor_type: 'user',
        api_key_id: null,
        ip_address: '192.0.2.1',
        request_id: null,
        target_type: 'approval',
        target_id: `${actor}-t0`,
        data: { n: 0, pad: '' },
      },
    ]);
  });

  it('a tampered cursor, or one of another list, is 400/2001', async () => {
    const actor = newActor();
    await seedAuditEntries(svc, { count: 3, actor });
    const first = (await get(`?actor=${actor}&limit=1`)).json<{ pagination: { next_cursor: string } }>();
    const cursor = first.pagination.next_cursor;
    const tampered = `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`;
    const users = (await svc.app.inject({ method: 'GET', url: '/api/v1/users?limit=1', headers: ceo.headers })).json<{ pagination: { next_cursor: string } }>();
    for (const bad of [tampered, users.pagination.next_cursor]) {
      const res = await get(`?actor=${actor}&cursor=${encodeURIComponent(bad)}`, ceo, PROBLEM);
      expect([res.statusCode, res.json().error_code, res.json().detail]).toEqual([400, 2001, 'query.cursor: invalid or expired cursor']);
    }
  });
});

describe('filters', () => {
  it('type: one type exactly, or a prefix ending in "." for every type under it', async () => {
    const actor = newActor();
    await seedAuditEntries(svc, { count: 12, actor, types: ['auth.login_failed', 'auth.logout', 'approval.created', 'api_key.created'] });
    const typesOf = async (type: string) => (await walk(`actor=${actor}&type=${type}`, 50)).entries.map((e) => e.type);
    expect(await typesOf('auth.logout')).toEqual(Array(3).fill('auth.logout'));
    expect(new Set(await typesOf('auth.'))).toEqual(new Set(['auth.login_failed', 'auth.logout']));
    expect(await typesOf('auth.')).toHaveLength(6);
    expect(new Set(await typesOf('api_key.'))).toEqual(new Set(['api_key.created']));
    // A prefix is a whole first part: `a.` is nothing, and `auth` without the dot is an exact type nobody has.
    expect(await typesOf('a.')).toEqual([]);
    expect(await typesOf('auth')).toEqual([]);
  });

  it('actor and target_id match exactly', async () => {
    const [one, two] = [newActor(), newActor()];
    await seedAuditEntries(svc, { count: 5, actor: one, targets: 5 });
    await seedAuditEntries(svc, { count: 2, actor: two });
    expect((await walk(`actor=${one}`, 50)).entries).toHaveLength(5);
    expect((await walk(`actor=${two.toUpperCase()}`, 50)).entries).toHaveLength(0);
    const byTarget = (await walk(`target_id=${one}-t3`, 50)).entries;
    expect(byTarget.map((e) => [e.actor, e.target_id])).toEqual([[one, `${one}-t3`]]);
  });

  it('since is inclusive and until exclusive, in any offset', async () => {
    const actor = newActor();
    await seedAuditEntries(svc, { count: 10, actor, start: at(3 * D), stepMs: 60_000 });
    const times = async (range: string) => (await walk(`actor=${actor}&${range}`, 50)).entries.map((e) => e.occurred_at).reverse();
    const minute = (n: number) => iso(3 * D + n * 60_000);
    expect(await times(`since=${minute(3)}&until=${minute(6).replace('.000Z', 'Z')}`)).toEqual([minute(3), minute(4), minute(5)]);
    // The same instant written with another offset.
    const plusOne = new Date(RECENT + 3 * D + 8 * 60_000 + 3600_000).toISOString().replace('.000Z', '+01:00');
    expect(await times(`since=${encodeURIComponent(plusOne)}`)).toEqual([minute(8), minute(9)]);
    expect(await times(`until=${minute(0)}`)).toEqual([]);
  });

  it('bad filters are 400/2001 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['since=yesterday', 'query.since'],
      ['until=2024-13-01T00:00:00Z', 'query.until'],
      [`type=${'a'.repeat(65)}`, 'query.type'],
      ['limit=0', 'query.limit'],
      ['limit=201', 'query.limit'],
      ['limit=1.5', 'query.limit'],
      [`actor=${'b'.repeat(129)}`, 'query.actor'],
      [`target_id=${'c'.repeat(129)}`, 'query.target_id'],
    ];
    for (const [query, parameter] of cases) {
      const res = await get(`?${query}`, ceo, PROBLEM);
      expect([res.statusCode, res.json().error_code], query).toEqual([400, 2001]);
      expect(res.json().detail, query).toContain(parameter);
      expectResponseConforms(doc, 'GET', '/api/v1/audit', res);
    }
  });
});

describe('tRPC audit.list', () => {
  it('answers the same page as GET /audit, as { items, pagination }', async () => {
    const actor = newActor();
    await seedAuditEntries(svc, { count: 3, actor });
    const rest = (await get(`?actor=${actor}&limit=2`)).json<{ data: AuditEntry[]; pagination: unknown }>();
    const trpc = await ceo.caller.audit.list({ actor, limit: 2 });
    expect(trpc.items).toEqual(rest.data);
    expect(trpc.pagination).toEqual(rest.pagination);
    const http = await svc.app.inject({ method: 'GET', url: `/api/trpc/audit.list?input=${encodeURIComponent(JSON.stringify({ actor, limit: 2 }))}`, headers: ceo.headers });
    expect(http.json().result.data.items).toEqual(rest.data);
  });
});

describe('indexes', () => {
  type PlanNode = { 'Node Type': string; 'Index Name'?: string; Plans?: PlanNode[] };
  const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

  it('every filter, and every filter with a cursor, is served by an index that yields the list’s order', async () => {
    const actor = newActor();
    // Enough rows that the planner prefers indexes to reading the table.
    await seedAuditEntries(svc, { count: 30_000, actor, targets: 3000, types: ['auth.login_failed', 'auth.logout', 'approval.created', 'user.updated', 'api_key.created'] });
    // Rare values, for which only their own index avoids reading most of the table.
    const rare = newActor();
    await seedAuditEntries(svc, { count: 100, actor: rare, types: ['auth.password_changed'] });
    await seedAuditEntries(svc, { count: 100, actor: newActor(), types: ['admin.list-users'] });
    const em = svc.deps.orm.em.fork();
    const client = await (await nativePool(svc.deps.orm)).connect();
    const planOf = async (query: AuditQuery, position: AuditPosition | null): Promise<PlanNode[]> => {
      const compiled = auditPageQuery(em, query, position, 51).compile();
      // Bound as the service binds them (extended protocol), so the plan is the one a request gets.
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (format json) ${compiled.sql}`, [...compiled.parameters]);
      const plan = rows[0]?.['QUERY PLAN'][0].Plan;
      return plan ? nodes(plan) : [];
    };
    const after = { occurredAt: at(4 * H), id: 2 ** 40 };
    // Each filter and the index made for it; a common value may also be found by walking the time index.
    const queries: [string, AuditQuery, string | null][] = [
      ['none', {}, 'audit_entries_occurred_at_id_idx'],
      ['exact type', { type: { exact: 'auth.password_changed' } }, 'audit_entries_type_idx'],
      ['common exact type', { type: { exact: 'auth.logout' } }, null],
      ['type prefix', { type: { prefix: 'admin.' } }, 'audit_entries_category_idx'],
      ['common type prefix', { type: { prefix: 'auth.' } }, null],
      ['actor', { actor: rare }, 'audit_entries_actor_idx'],
      ['target_id', { targetId: `${actor}-t7` }, 'audit_entries_target_idx'],
      ['since/until', { since: at(2 * H), until: at(3 * H) }, 'audit_entries_occurred_at_id_idx'],
    ];
    try {
      for (const [name, query, index] of queries) {
        for (const position of [null, after]) {
          // As planned: an index of the audit log, never the whole table.
          const natural = await planOf(query, position);
          expect(natural.map((n) => n['Node Type']), name).not.toContain('Seq Scan');
          expect(natural.some((n) => n['Index Name']?.startsWith('audit_entries_')), name).toBe(true);
          // And an index gives the order by itself: with sorting priced out, no Sort is left. (For a value with a
          // handful of entries the planner may rightly sort those few instead of walking the index in order.)
          await client.query('begin');
          await client.query('set local enable_sort = off');
          const ordered = await planOf(query, position);
          await client.query('rollback');
          expect(ordered.map((n) => n['Node Type']), `${name}: ${JSON.stringify(ordered.map((n) => n['Node Type']))}`).not.toContain('Sort');
          const used = ordered.map((n) => n['Index Name']).filter((n) => n !== undefined);
          if (index === null) expect(used.every((n) => n.startsWith('audit_entries_')) && used.length === 1, `${name}: ${used.join()}`).toBe(true);
          else expect(used, name).toEqual([index]);
        }
      }
    } finally {
      client.release();
    }
  });
});
