// GET /audit/export (CONTRACT §4.13, §5): NDJSON oldest first, streamed with back-pressure, one per user (5002), REST only.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AuditEntry } from '../src/contracts/audit.ts';
import { kysely } from '../src/db/kysely.ts';
import { nativePool } from '../src/db/pool.ts';
import { at, iso, seedAuditEntries } from './helpers/audit.ts';
import { until } from './helpers/events.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
let base: string;
beforeAll(async () => {
  // Rate limits off: the one-export cap must hold all the same (CONTRACT §5 rev. 3).
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  ceo = await createUser(svc, { role: 'ceo' });
  base = await svc.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => svc.close());

const PROBLEM = { accept: 'application/problem+json' };
const newActor = () => `seed_${randomBytes(4).toString('hex')}`;
const exportOf = (query: string, user: TestUser = ceo, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'GET', url: `/api/v1/audit/export${query}`, headers: { ...user.headers, ...headers } });
const lines = (body: string) => body.split('\n').filter((line) => line.length > 0).map((line) => AuditEntry.parse(JSON.parse(line)));

type Page = { data: AuditEntry[]; pagination: { next_cursor: string | null } };

/** Every entry GET /audit shows for `query`, oldest first. */
async function listed(query: string): Promise<AuditEntry[]> {
  const all: AuditEntry[] = [];
  let cursor: string | null = null;
  do {
    const res = await svc.app.inject({ method: 'GET', url: `/api/v1/audit?${query}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, headers: ceo.headers });
    const body: Page = res.json<Page>();
    all.push(...body.data);
    cursor = body.pagination.next_cursor;
  } while (cursor !== null);
  return all.reverse();
}

/** A real HTTP export that reads its first bytes and then stops reading (as a stalled client would). */
function stalledExport(user: TestUser, query: string): Promise<{ status: number; request: http.ClientRequest }> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}/api/v1/audit/export${query}`, { headers: user.headers }, (res) => {
      res.once('data', () => {
        res.pause();
        resolve({ status: res.statusCode ?? 0, request });
      });
      res.once('error', () => {});
    });
    request.once('error', reject);
  });
}

/** Backends of the test database running an export's query or holding its transaction open (only the export reads `audit_export.` settings). */
async function exportBackends(): Promise<number> {
  const pool = await nativePool(svc.deps.orm);
  const { rows } = await pool.query<{ n: string }>(
    `select count(*) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()
       and query like '%audit_export.%' and state <> 'idle'`,
  );
  return Number(rows[0]?.n ?? 0);
}

describe('the export', () => {
  it('streams every matching entry as one AuditEntry per line, oldest first: the entries GET /audit shows', async () => {
    const actor = newActor();
    // More than one chunk of lines.
    await seedAuditEntries(svc, { count: 2345, actor, targets: 7 });
    const res = await exportOf(`?actor=${actor}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(res.body.endsWith('\n')).toBe(true);
    const exported = lines(res.body);
    expect(exported).toHaveLength(2345);
    expect(exported).toEqual(await listed(`actor=${actor}`));
  });

  it('takes the list’s filters', async () => {
    const actor = newActor();
    await seedAuditEntries(svc, { count: 40, actor, types: ['auth.logout', 'approval.created'], start: at(0), stepMs: 60_000, targets: 4 });
    for (const query of ['type=auth.', 'type=approval.created', `target_id=${actor}-t2`, `since=${iso(10 * 60_000)}&until=${iso(20 * 60_000)}`]) {
      const res = await exportOf(`?actor=${actor}&${query}`);
      expect(lines(res.body), query).toEqual(await listed(`actor=${actor}&${query}`));
      expect(lines(res.body).length, query).toBeGreaterThan(0);
    }
  });

  it('an export of nothing is a 200 with an empty body', async () => {
    const res = await exportOf(`?actor=${newActor()}`);
    expect([res.statusCode, res.body]).toEqual([200, '']);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
  });

  it('HEAD answers the status and headers alone', async () => {
    const actor = newActor();
    await seedAuditEntries(svc, { count: 10, actor });
    const res = await svc.app.inject({ method: 'HEAD', url: `/api/v1/audit/export?actor=${actor}`, headers: ceo.headers });
    expect([res.statusCode, res.body]).toEqual([200, '']);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
  });
});

describe('lines are the entries, whatever they hold', () => {
  it('quotes, backslashes, control and non-ASCII characters, nulls, and times at the edges of a day export as GET /audit shows them', async () => {
    // The filter value itself is such a string: it reaches the statement as a setting, never as SQL text.
    const actor = `o'brien "q" \\ ${randomBytes(3).toString('hex')}`;
    const odd = ['a "quoted" word', 'back\\slash', 'tab\tnew\nline\r', 'bell\u0007 del\u007f', 'é ü ß 漢字 🚀', 'line\u2028separator', ''];
    const times = ['1969-12-31T23:59:59.999Z', '2026-02-28T23:59:59.999Z', '2026-03-01T00:00:00.000Z', '2026-03-01T00:00:00.001Z', '2038-01-19T03:14:08.000Z'];
    const rows = odd.flatMap((text, i) =>
      times.map((time, j) => ({
        occurredAt: new Date(time),
        type: 'user.updated',
        category: 'user',
        actor,
        actorType: 'user' as const,
        apiKeyId: j % 2 === 0 ? null : '7f1c6a52-3a8e-4f0f-9d4b-3f6f0a1e2b3c',
        ipAddress: j % 3 === 0 ? null : '2001:db8::1',
        requestId: text === '' ? null : `req ${text}`,
        targetType: j === 0 ? null : 'user',
        targetId: `${text}-${String(i)}-${String(j)}`,
        data: { text, nested: { list: [1, 2.5, null, true, text], empty: {} }, [`key ${text}`]: text },
      })),
    );
    await kysely(svc.deps.orm.em.fork()).insertInto('audit_entries').values(rows).execute();
    const res = await exportOf(`?actor=${encodeURIComponent(actor)}`);
    expect(res.statusCode).toBe(200);
    const exported = lines(res.body);
    expect(exported).toHaveLength(rows.length);
    expect(exported).toEqual(await listed(`actor=${encodeURIComponent(actor)}`));
  });

  it('entries that share one time stay in id order across batches, whatever the ids\' lengths', async () => {
    const actor = newActor();
    // More than one batch (2,000 entries) at one instant, with ids on both sides of a power of ten.
    const time = at(5000);
    const rows = Array.from({ length: 4500 }, (_, i) => ({
      id: 99_999_997_750 + i,
      occurredAt: time,
      type: 'approval.created',
      category: 'approval',
      actor,
      actorType: 'user' as const,
      data: { i },
    }));
    for (let from = 0; from < rows.length; from += 1000) await kysely(svc.deps.orm.em.fork()).insertInto('audit_entries').values(rows.slice(from, from + 1000)).execute();
    const exported = lines((await exportOf(`?actor=${actor}`)).body);
    expect(exported.map((entry) => Number(entry.id))).toEqual(rows.map((row) => row.id));
  });
});

describe('refusals come before any line', () => {
  it('roles other than ceo and board_member get 403/1001; a board member may export', async () => {
    const board = await createUser(svc, { role: 'board_member' });
    expect((await exportOf(`?actor=${newActor()}`, board)).statusCode).toBe(200);
    const observer = await createUser(svc, { role: 'observer' });
    const res = await exportOf('', observer, PROBLEM);
    expect([res.statusCode, res.json().error_code]).toEqual([403, 1001]);
  });

  it('bad filters are 400/2001 naming the parameter', async () => {
    for (const [query, parameter] of [
      ['?since=not-a-time', 'query.since'],
      [`?type=${'t'.repeat(65)}`, 'query.type'],
      [`?limit=10&actor=${newActor()}`, 'query.limit'],
    ] as const) {
      const res = await exportOf(query, ceo, PROBLEM);
      if (parameter === 'query.limit') {
        // The export takes no page size: an unknown query parameter is ignored, as everywhere.
        expect(res.statusCode, query).toBe(200);
        continue;
      }
      expect([res.statusCode, res.json().error_code], query).toEqual([400, 2001]);
      expect(res.json().detail).toContain(parameter);
    }
  });

  it('an API key needs the scope audit:read', async () => {
    const issue = async (scopes: string[]) =>
      (await svc.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: ceo.headers, payload: { name: 'exporter', scopes } })).json().data as { secret: string };
    const [reader, other] = [await issue(['audit:read']), await issue(['users:read'])];
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/audit/export?type=nothing.', headers: { authorization: `Bearer ${reader.secret}` } })).statusCode).toBe(200);
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/audit/export', headers: { authorization: `Bearer ${other.secret}`, ...PROBLEM } });
    expect([res.statusCode, res.json().detail]).toEqual([403, 'the API key lacks the scope audit:read']);
  });
});

describe('one export in flight per user, with back-pressure', () => {
  it('while a client is not reading its export, the same user’s next one is 429/5002 (retry_after 1); others are not held up; the slot frees when it ends', async () => {
    const actor = newActor();
    // Far more than the sockets buffer, so the stalled export stays in flight.
    await seedAuditEntries(svc, { count: 60_000, actor, pad: 500 });
    const auditor = await createUser(svc, { role: 'board_member' });
    const first = await stalledExport(auditor, `?actor=${actor}`);
    expect(first.status).toBe(200);
    try {
      const second = await exportOf(`?actor=${actor}`, auditor, PROBLEM);
      expect([second.statusCode, second.json().error_code, second.json().retry_after, second.headers['retry-after']]).toEqual([429, 5002, 1, '1']);
      // Another user exports meanwhile.
      expect((await exportOf(`?actor=${newActor()}`)).statusCode).toBe(200);
    } finally {
      first.request.destroy();
    }
    await until(async () => (await exportOf(`?actor=${newActor()}`, auditor)).statusCode === 200, 5000, 'the slot to free');
  });

  it('a client that disconnects mid-export stops the query and frees its connection', async () => {
    const actor = newActor();
    await seedAuditEntries(svc, { count: 60_000, actor, pad: 500 });
    const pool = await nativePool(svc.deps.orm);
    const exporting = await stalledExport(ceo, `?actor=${actor}`);
    try {
      expect(exporting.status).toBe(200);
      expect(await exportBackends()).toBe(1);
      expect(pool.totalCount - pool.idleCount).toBeGreaterThanOrEqual(1);
    } finally {
      exporting.request.destroy();
    }
    await until(async () => (await exportBackends()) === 0, 5000, 'the export’s query to stop');
    await until(() => pool.totalCount - pool.idleCount === 0, 5000, 'the connection to return to the pool');
    // Its slot went with it.
    expect((await exportOf(`?actor=${newActor()}`)).statusCode).toBe(200);
  });
});

describe('long exports', () => {
  it('an export that lasts longer than STATEMENT_TIMEOUT_MS is not cut: the limit is per batch, not for the whole export', async () => {
    const actor = newActor();
    await seedAuditEntries(svc, { count: 20_000, actor, pad: 500 });
    // A statement limit each batch keeps easily, and which the whole export outlasts several times over.
    const short = await startTestService({ databaseUrl: svc.databaseUrl, env: { RATE_LIMITS_ENABLED: 'false', STATEMENT_TIMEOUT_MS: '1000' } });
    try {
      const shortBase = await short.app.listen({ port: 0, host: '127.0.0.1' });
      const body = await new Promise<string>((resolve, reject) => {
        http
          .get(`${shortBase}/api/v1/audit/export?actor=${actor}`, { headers: ceo.headers }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
            res.on('error', reject);
            // Reads nothing for longer than the statement limit (and the driver's own read limit after it), then everything.
            res.pause();
            setTimeout(() => res.resume(), 4000);
          })
          .on('error', reject);
      });
      expect(lines(body)).toHaveLength(20_000);
    } finally {
      await short.close();
    }
  });
});

describe('the driver\'s read timer', () => {
  it('fails no batch of an export after it ended (pg arms it for every query; a COPY stream never clears it itself)', async () => {
    const actor = newActor();
    await seedAuditEntries(svc, { count: 2500, actor });
    // The driver's read limit is STATEMENT_TIMEOUT_MS + 1 s: 1.2 s here.
    const short = await startTestService({ databaseUrl: svc.databaseUrl, env: { RATE_LIMITS_ENABLED: 'false', STATEMENT_TIMEOUT_MS: '200' } });
    // The timer fails a query by emitting this error on it.
    const emitted = vi.spyOn(EventEmitter.prototype, 'emit');
    try {
      const res = await short.app.inject({ method: 'GET', url: `/api/v1/audit/export?actor=${actor}`, headers: ceo.headers });
      expect(lines(res.body)).toHaveLength(2500);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(emitted.mock.calls.filter(([event, error]) => event === 'error' && error instanceof Error && error.message === 'Query read timeout')).toEqual([]);
    } finally {
      emitted.mockRestore();
      await short.close();
    }
  });
});

describe('REST only, and documented', () => {
  it('tRPC has audit.list but no audit.export', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/trpc/audit.export', headers: ceo.headers });
    expect(res.statusCode).toBe(404);
    expect('export' in ceo.caller.audit).toBe(false);
  });

  it('the OpenAPI document gives its 200 as application/x-ndjson of AuditEntry, and its 5002', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<{
      paths: Record<string, { get: { responses: Record<string, { content?: Record<string, { schema: unknown }>; description?: string }> } }>;
    }>();
    const responses = doc.paths['/audit/export']?.get.responses ?? {};
    expect(responses['200']?.content).toEqual({ 'application/x-ndjson': { schema: { $ref: '#/components/schemas/AuditEntry' } } });
    expect(responses['429']?.description).toContain('5002');
  });
});
