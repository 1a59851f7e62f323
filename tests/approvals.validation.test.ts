import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { encodeCursor } from '../src/services/pagination.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let writer: TestUser;

beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS: JSON.stringify({ 'approvals.create': { limit: 1000, window_s: 60 } }) } });
  writer = await createUser(svc, { role: 'pair_programmer' });
});
afterAll(() => svc.close());

const VALID = { action_type: 'deploy:production', title: 'Ship it', description: 'Release 2.0', risk_level: 'medium' };

async function approvalCount(): Promise<number> {
  const row = await kysely(svc.deps.orm.em.fork())
    .selectFrom('approvals')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function post(payload: unknown, headers: Record<string, string> = {}) {
  return svc.app.inject({ method: 'POST', url: '/api/v1/approvals', headers: { 'content-type': 'application/json', ...writer.headers, ...headers }, payload: JSON.stringify(payload) });
}

const metadataOf = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

describe('POST /api/v1/approvals rejects every format violation with 400/2001 and writes nothing', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['action_type without a colon', { action_type: 'deploy' }, /^body\.action_type: must be <category>:<action>/],
    ['action_type with two colons', { action_type: 'deploy:prod:eu' }, /^body\.action_type/],
    ['action_type with nothing before the colon', { action_type: ':production' }, /^body\.action_type/],
    ['action_type with only blanks after the colon', { action_type: 'deploy:   ' }, /^body\.action_type/],
    ['action_type over 128 characters', { action_type: `deploy:${'x'.repeat(122)}` }, /^body\.action_type: too long \(max 128\)/],
    ['a missing action_type', { action_type: undefined }, /^body\.action_type: is required/],
    ['an empty title', { title: '' }, /^body\.title: too short/],
    ['a blank title', { title: '   ' }, /^body\.title: must not be blank/],
    ['a title over 256 characters', { title: 't'.repeat(257) }, /^body\.title: too long \(max 256\)/],
    ['an empty description', { description: '' }, /^body\.description/],
    ['a description over 4096 characters', { description: 'd'.repeat(4097) }, /^body\.description: too long \(max 4096\)/],
    ['an unknown risk level', { risk_level: 'extreme' }, /^body\.risk_level: must be one of low, medium, high, critical/],
    ['an upper-case risk level', { risk_level: 'HIGH' }, /^body\.risk_level/],
    ['a TTL under 60 s', { ttl_seconds: 59 }, /^body\.ttl_seconds: must be >= 60/],
    ['a TTL over 7 days', { ttl_seconds: 604_801 }, /^body\.ttl_seconds: must be <= 604800/],
    ['a fractional TTL', { ttl_seconds: 90.5 }, /^body\.ttl_seconds/],
    ['a TTL as a string', { ttl_seconds: '120' }, /^body\.ttl_seconds: /],
    ['an empty task_id', { task_id: '' }, /^body\.task_id/],
    ['a task_id over 128 characters', { task_id: 't'.repeat(129) }, /^body\.task_id/],
    ['21 metadata keys', { metadata: metadataOf(21) }, /^body\.metadata: must have at most 20 keys/],
    ['a 257-character metadata value', { metadata: { note: 'v'.repeat(257) } }, /^body\.metadata\.note: too long \(max 256\)/],
    ['a 257-character metadata key', { metadata: { ['k'.repeat(257)]: 'v' } }, /keys must be 1 to 256 characters/],
    ['an empty metadata key', { metadata: { '': 'v' } }, /keys must be 1 to 256 characters/],
    ['an empty metadata value', { metadata: { note: '' } }, /^body\.metadata\.note: too short/],
    ['a non-string metadata value', { metadata: { count: 3 } }, /^body\.metadata\.count: /],
    ['an unknown field', { status: 'approved' }, /^body: unknown field status/],
  ];

  it.each(cases)('%s', async (_name, change, detail) => {
    const before = await approvalCount();
    const res = await post({ ...VALID, ...change });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.error_detail).toMatchObject({ error_code: 2001, error_category: 'validation', retryable: false });
    expect(body.error).toMatch(detail);
    expect(await approvalCount()).toBe(before);
  });

  it('answers a bare ProblemDetail when asked for', async () => {
    const res = await post({ ...VALID, ttl_seconds: 30 }, { accept: 'application/problem+json' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json()).toMatchObject({ status: 400, error_code: 2001, detail: 'body.ttl_seconds: must be >= 60' });
  });

  it('accepts the bounds themselves: TTL 60 and 604800, 20 metadata keys of 256 characters', async () => {
    const long = 'x'.repeat(256);
    const metadata = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${i}`.padStart(256, 'k'), long]));
    const before = await approvalCount();
    for (const ttl of [60, 604_800]) {
      const res = await post({ ...VALID, ttl_seconds: ttl, metadata, action_type: ` a b : c d `, task_id: 't'.repeat(128) });
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toMatchObject({ seconds_remaining: ttl, metadata });
    }
    expect(await approvalCount()).toBe(before + 2);
  });
});

describe('GET /api/v1/approvals rejects bad queries with 400/2001', () => {
  const cases: [string, string, RegExp][] = [
    ['an unknown status', 'status=done', /^query\.status: must be one of pending, approved, rejected, expired/],
    ['an unknown risk level', 'risk_level=severe', /^query\.risk_level/],
    ['an action_type over 128 characters', `action_type=${'a'.repeat(129)}`, /^query\.action_type: too long/],
    ['limit 0', 'limit=0', /^query\.limit: must be >= 1/],
    ['limit 201', 'limit=201', /^query\.limit: must be <= 200/],
    ['a fractional limit', 'limit=1.5', /^query\.limit/],
    ['limit 1e2', 'limit=1e2', /^query\.limit/],
    ['a garbage cursor', 'cursor=garbage', /^query\.cursor: invalid/],
    ['a cursor over 512 characters', `cursor=${'c'.repeat(513)}`, /^query\.cursor: too long/],
  ];

  it.each(cases)('%s', async (_name, query, detail) => {
    const res = await svc.app.inject({ method: 'GET', url: `/api/v1/approvals?${query}`, headers: writer.headers });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
    expect(res.json().error).toMatch(detail);
  });

  it('refuses a cursor of another list, and a tampered one', async () => {
    const foreign = encodeCursor(svc.deps.secret, 'users', ['2026-01-01T00:00:00.000Z', '00000000-0000-4000-8000-000000000000']);
    const own = encodeCursor(svc.deps.secret, 'approvals', ['2026-01-01T00:00:00.000Z', '00000000-0000-4000-8000-000000000000']);
    const tampered = `${own.slice(0, -2)}${own.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const cursor of [foreign, tampered]) {
      const res = await svc.app.inject({ method: 'GET', url: `/api/v1/approvals?cursor=${cursor}`, headers: writer.headers });
      expect(res.statusCode).toBe(400);
      expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
    }
    expect((await svc.app.inject({ method: 'GET', url: `/api/v1/approvals?cursor=${own}`, headers: writer.headers })).statusCode).toBe(200);
  });

  it('refuses a signed cursor whose position is not a (timestamp, uuid) pair (400/2001, never a database error)', async () => {
    const uuid = '00000000-0000-4000-8000-000000000000';
    for (const position of [
      ['2026-01-01T00:00:00.000Z', `${uuid}x`],
      ['2026-01-01T00:00:00.000Z', `x${uuid}`],
      ['2026-01-01T00:00:00.000Z', `${uuid}\n`],
      ['2026-01-01T00:00:00.000Zx', uuid],
      ['2026-01-01T00:00:00.000Z', uuid, 'extra'],
    ]) {
      const cursor = encodeCursor(svc.deps.secret, 'approvals', position);
      const res = await svc.app.inject({ method: 'GET', url: `/api/v1/approvals?cursor=${cursor}`, headers: writer.headers });
      expect(res.statusCode, JSON.stringify(position)).toBe(400);
      expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
    }
  });

  it('ignores empty values (an empty value counts as absent)', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/approvals?status=&risk_level=&limit=', headers: writer.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().pagination.limit).toBe(50);
  });
});
