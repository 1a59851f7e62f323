import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { statementsDuring } from './helpers/statements.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
let manager: TestUser;
let board: TestUser;
let pair: TestUser;
let observer: TestUser;

beforeAll(async () => {
  // Generous create limit: this file creates far more approvals per user than a real minute would.
  svc = await startTestService({ env: { RATE_LIMITS: JSON.stringify({ 'approvals.create': { limit: 1000, window_s: 60 } }) } });
  [ceo, manager, board, pair, observer] = await Promise.all([
    createUser(svc, { role: 'ceo' }),
    createUser(svc, { role: 'manager' }),
    createUser(svc, { role: 'board_member' }),
    createUser(svc, { role: 'pair_programmer' }),
    createUser(svc, { role: 'observer' }),
  ]);
});
afterAll(() => svc.close());

const PROBLEM = { accept: 'application/problem+json' };
const BODY = { action_type: 'deploy:production', title: 'Ship 1.2', description: 'Roll out release 1.2', risk_level: 'high' };

function create(user: TestUser, body: Record<string, unknown> = {}) {
  return svc.app.inject({ method: 'POST', url: '/api/v1/approvals', headers: user.headers, payload: { ...BODY, ...body } });
}

async function createId(user: TestUser = pair, body: Record<string, unknown> = {}): Promise<string> {
  const res = await create(user, body);
  expect(res.statusCode).toBe(201);
  return res.json<{ data: { id: string } }>().data.id;
}

function get(user: TestUser, id: string, headers: Record<string, string> = {}) {
  return svc.app.inject({ method: 'GET', url: `/api/v1/approvals/${id}`, headers: { ...user.headers, ...headers } });
}

function decide(user: TestUser, id: string, verb: 'approve' | 'reject', payload?: Record<string, unknown>, headers: Record<string, string> = {}) {
  const body = payload ?? (verb === 'reject' ? { reason: 'not now' } : { comment: null });
  return svc.app.inject({ method: 'POST', url: `/api/v1/approvals/${id}/${verb}`, headers: { ...user.headers, ...headers }, payload: body });
}

/** Strings that contain or resemble a real id (PostgreSQL would cast some, refuse others) but are not it. */
function nearUuids(id: string): string[] {
  return [`${id}x`, `x${id}`, `${id}0`, `${id}%0A`, `%20${id}`, `%7B${id}%7D`, id.replaceAll('-', '')];
}

async function storedRow(id: string) {
  const row = await kysely(svc.deps.orm.em.fork()).selectFrom('approvals').select(['status', 'decidedById']).where('id', '=', id).executeTakeFirst();
  return row && { status: row.status, decided_by_id: row.decidedById };
}

describe('POST /api/v1/approvals', () => {
  it('creates a pending approval: 201, Location, every ApprovalResponse field', async () => {
    const res = await create(pair, { ttl_seconds: 7200, task_id: 'task-42', metadata: { env: 'prod', ticket: 'OPS-1' } });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ error: null, error_detail: null, success: true });
    const data = res.json<{ data: { id: string; created_at: string; expires_at: string } }>().data;
    expect(res.headers.location).toBe(`/api/v1/approvals/${data.id}`);
    expect(data).toEqual({
      id: expect.any(String),
      action_type: 'deploy:production',
      title: 'Ship 1.2',
      description: 'Roll out release 1.2',
      requested_by: pair.username,
      risk_level: 'high',
      status: 'pending',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      expires_at: expect.stringMatching(/\.\d{3}Z$/),
      decided_at: null,
      decided_by: null,
      decision_reason: null,
      task_id: 'task-42',
      metadata: { env: 'prod', ticket: 'OPS-1' },
      seconds_remaining: 7200,
      urgency_level: 'high',
    });
    expect(Date.parse(data.expires_at) - Date.parse(data.created_at)).toBe(7200 * 1000);
  });

  it('defaults: no expiry, no task, empty metadata', async () => {
    const res = await create(manager);
    expect(res.json().data).toMatchObject({ expires_at: null, seconds_remaining: null, urgency_level: 'no_expiry', task_id: null, metadata: {} });
  });

  it('takes requested_by from the caller, never from the body (unknown field → 400/2001)', async () => {
    const res = await create(pair, { requested_by: ceo.username });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
    expect(res.json().error).toMatch(/requested_by/);
  });

  it('is open to ceo, manager and pair_programmer', async () => {
    for (const user of [ceo, manager, pair]) {
      const res = await create(user);
      expect(res.statusCode).toBe(201);
      expect(res.json().data.requested_by).toBe(user.username);
    }
  });

  it('is 403/1001 for board_member and observer', async () => {
    for (const user of [board, observer]) {
      const res = await create(user);
      expect(res.statusCode).toBe(403);
      expect(res.json().error_detail).toMatchObject({ error_code: 1001, error_category: 'auth' });
    }
  });

  it('is 401/1000 without credentials', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/approvals', payload: BODY });
    expect(res.statusCode).toBe(401);
    expect(res.json().error_detail).toMatchObject({ error_code: 1000 });
  });
});

describe('GET /api/v1/approvals/{approval_id}', () => {
  it('answers any signed-in user with the approval and a strong ETag', async () => {
    const id = await createId();
    const res = await get(observer, id);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id, status: 'pending', requested_by: pair.username });
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    expect((await get(observer, id)).headers.etag).toBe(res.headers.etag);
  });

  it('sends a different ETag once the approval changed', async () => {
    const id = await createId();
    const before = (await get(observer, id)).headers.etag;
    expect((await decide(manager, id, 'approve')).statusCode).toBe(200);
    expect((await get(observer, id)).headers.etag).not.toBe(before);
  });

  it('is 404/3000 for an unknown id, in both error formats', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await get(observer, id);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ data: null, success: false, error_detail: { error_code: 3000, error_category: 'not_found' } });
    }
    const problem = await get(observer, 'nope', PROBLEM);
    expect(problem.statusCode).toBe(404);
    expect(problem.headers['content-type']).toBe('application/problem+json');
    expect(problem.json()).toMatchObject({ status: 404, error_code: 3000, title: 'Resource Not Found' });
  });

  it('is 404/3000 for an id that is almost a UUID, never a database error', async () => {
    const id = await createId();
    for (const near of nearUuids(id)) {
      const res = await get(observer, near);
      expect(res.statusCode, near).toBe(404);
      expect(res.json().error_detail, near).toMatchObject({ error_code: 3000 });
    }
  });

  it('is 400/2001 for an id over 128 characters', async () => {
    const res = await get(observer, 'a'.repeat(129));
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
  });

  it('is 401/1000 without credentials', async () => {
    const res = await svc.app.inject({ method: 'GET', url: `/api/v1/approvals/${await createId()}` });
    expect(res.statusCode).toBe(401);
  });
});

describe('POST /api/v1/approvals/{approval_id}/approve', () => {
  it('approves: 200 with status, decided_at, decided_by and the comment as decision_reason', async () => {
    const id = await createId();
    const res = await decide(board, id, 'approve', { comment: 'looks safe' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id, status: 'approved', decided_by: board.username, decision_reason: 'looks safe', requested_by: pair.username });
    expect(res.json().data.decided_at).toMatch(/\.\d{3}Z$/);
    expect((await get(observer, id)).json().data).toMatchObject({ status: 'approved', decided_by: board.username });
    expect(await storedRow(id)).toEqual({ status: 'approved', decided_by_id: board.id });
  });

  it('takes an empty body or a null comment (decision_reason null)', async () => {
    const id = await createId();
    const res = await svc.app.inject({ method: 'POST', url: `/api/v1/approvals/${id}/approve`, headers: ceo.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'approved', decision_reason: null, decided_by: ceo.username });
  });

  it('is open to ceo, manager and board_member', async () => {
    for (const user of [ceo, manager, board]) {
      expect((await decide(user, await createId(), 'approve')).statusCode).toBe(200);
    }
  });

  it('is 403/1001 for pair_programmer and observer, and the approval stays pending', async () => {
    const id = await createId(manager);
    for (const user of [pair, observer]) {
      const res = await decide(user, id, 'approve');
      expect(res.statusCode).toBe(403);
      expect(res.json().error_detail).toMatchObject({ error_code: 1001 });
    }
    expect((await storedRow(id))?.status).toBe('pending');
  });

  it('is 403/1001 for the requester of the approval, whatever their role', async () => {
    for (const user of [manager, ceo]) {
      const id = await createId(user);
      for (const verb of ['approve', 'reject'] as const) {
        const res = await decide(user, id, verb);
        expect(res.statusCode).toBe(403);
        expect(res.json().error_detail).toMatchObject({ error_code: 1001 });
      }
      expect((await storedRow(id))?.status).toBe('pending');
    }
  });

  it('is 403/1001 for the requester also once the approval is decided (not 409)', async () => {
    const id = await createId(manager);
    expect((await decide(board, id, 'approve')).statusCode).toBe(200);
    const res = await decide(manager, id, 'reject');
    expect(res.statusCode).toBe(403);
    expect(res.json().error_detail).toMatchObject({ error_code: 1001 });
    expect(await storedRow(id)).toEqual({ status: 'approved', decided_by_id: board.id });
  });

  it('without If-Match reads nothing before its transaction: the conditional update is the only statement on approvals', async () => {
    const id = await createId();
    const sent = await statementsDuring(async () => expect((await decide(board, id, 'approve')).statusCode).toBe(200));
    const onApprovals = sent.map((s) => s.text).filter((text) => /"approvals"/.test(text));
    expect(onApprovals).toEqual([expect.stringMatching(/^update "approvals"/)]);
  });

  it('is 404/3000 for an unknown approval', async () => {
    const res = await decide(manager, '00000000-0000-4000-8000-000000000000', 'approve');
    expect(res.statusCode).toBe(404);
    expect(res.json().error_detail).toMatchObject({ error_code: 3000 });
  });

  it('is 404/3000 for an id that is almost a UUID, and nothing is decided', async () => {
    const id = await createId();
    for (const near of nearUuids(id)) {
      for (const verb of ['approve', 'reject'] as const) {
        const res = await decide(manager, near, verb);
        expect(res.statusCode, `${verb} ${near}`).toBe(404);
        expect(res.json().error_detail).toMatchObject({ error_code: 3000 });
      }
    }
    expect((await storedRow(id))?.status).toBe('pending');
  });

  it('refuses a comment over 4096 characters (400/2001)', async () => {
    const id = await createId();
    const res = await decide(manager, id, 'approve', { comment: 'x'.repeat(4097) });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
    expect((await storedRow(id))?.status).toBe('pending');
  });
});

describe('POST /api/v1/approvals/{approval_id}/reject', () => {
  it('rejects: 200 with the reason as decision_reason', async () => {
    const id = await createId();
    const res = await decide(manager, id, 'reject', { reason: 'too risky this week' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'rejected', decided_by: manager.username, decision_reason: 'too risky this week' });
    expect(await storedRow(id)).toEqual({ status: 'rejected', decided_by_id: manager.id });
  });

  it('needs a reason of 1..4096 non-blank characters (400/2001, nothing decided)', async () => {
    const id = await createId();
    for (const payload of [{}, { reason: '' }, { reason: '   ' }, { reason: null }, { reason: 'x'.repeat(4097) }]) {
      const res = await decide(manager, id, 'reject', payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 40)).toBe(400);
      expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
      expect(res.json().error).toMatch(/^body\.reason/);
    }
    expect((await storedRow(id))?.status).toBe('pending');
  });

  it('is 403/1001 for pair_programmer', async () => {
    expect((await decide(pair, await createId(manager), 'reject')).statusCode).toBe(403);
  });
});

describe('transitions: pending → approved | rejected, nothing else', () => {
  it.each([
    ['approved', 'approve'],
    ['approved', 'reject'],
    ['rejected', 'approve'],
    ['rejected', 'reject'],
  ] as const)('a %s approval cannot be %sd again (409/4000) and keeps its decision', async (_state, verb) => {
    const id = await createId();
    const first = _state === 'approved' ? 'approve' : 'reject';
    const done = await decide(manager, id, first);
    expect(done.statusCode).toBe(200);
    const res = await decide(board, id, verb);
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail).toMatchObject({ error_code: 4000, error_category: 'conflict' });
    expect(res.json().error).toBe(`approval is not pending (it is ${_state})`);
    expect((await get(observer, id)).json().data).toEqual(done.json().data);
    expect(await storedRow(id)).toEqual({ status: _state, decided_by_id: manager.id });
  });

  it('a conflict is a bare ProblemDetail when asked for', async () => {
    const id = await createId();
    await decide(manager, id, 'approve');
    const res = await decide(board, id, 'reject', undefined, PROBLEM);
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json()).toMatchObject({ status: 409, error_code: 4000, error_category: 'conflict', retryable: false, retry_after: null });
    expect(res.json()).not.toHaveProperty('success');
  });
});

describe('If-Match on decisions', () => {
  it('a decision carrying the current ETag goes through', async () => {
    const id = await createId();
    const etag = (await get(observer, id)).headers.etag as string;
    const res = await decide(manager, id, 'approve', undefined, { 'if-match': etag });
    expect(res.statusCode).toBe(200);
  });

  it('a stale ETag is 409/4002 and nothing changes', async () => {
    const id = await createId();
    const res = await decide(manager, id, 'reject', undefined, { 'if-match': '"stale"' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail).toMatchObject({ error_code: 4002 });
    expect((await storedRow(id))?.status).toBe('pending');
  });

  it('the ETag read before someone else decided no longer matches', async () => {
    const id = await createId();
    const etag = (await get(observer, id)).headers.etag as string;
    expect((await decide(board, id, 'approve')).statusCode).toBe(200);
    const res = await decide(manager, id, 'reject', undefined, { 'if-match': etag });
    expect(res.statusCode).toBe(409);
    expect(res.json().error_detail).toMatchObject({ error_code: 4002 });
  });

  it('If-Match: * matches any current approval', async () => {
    const id = await createId();
    expect((await decide(manager, id, 'approve', undefined, { 'if-match': '*' })).statusCode).toBe(200);
  });
});

describe('the tRPC procedures (dashboard)', () => {
  it('approvals.create / get / approve / reject work under the contract names', async () => {
    const created = await pair.caller.approvals.create({ ...BODY, risk_level: 'low' });
    expect(created).toMatchObject({ status: 'pending', requested_by: pair.username, risk_level: 'low' });
    expect(await observer.caller.approvals.get({ approval_id: created.id })).toMatchObject({ id: created.id });
    expect(await manager.caller.approvals.approve({ approval_id: created.id, comment: 'ok' })).toMatchObject({ status: 'approved' });
    const other = await pair.caller.approvals.create({ ...BODY, risk_level: 'critical' });
    expect(await manager.caller.approvals.reject({ approval_id: other.id, reason: 'no' })).toMatchObject({ status: 'rejected' });
    await expect(observer.caller.approvals.reject({ approval_id: other.id, reason: 'no' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      errorCode: 1001,
    });
  });
});
