import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
let manager: TestUser;
let pair: TestUser;
let board: TestUser;
let observer: TestUser;

beforeAll(async () => {
  svc = await startTestService();
  [ceo, manager, pair, board, observer] = await Promise.all([
    createUser(svc, { role: 'ceo' }),
    createUser(svc, { role: 'manager' }),
    createUser(svc, { role: 'pair_programmer' }),
    createUser(svc, { role: 'board_member' }),
    createUser(svc, { role: 'observer' }),
  ]);
});
afterAll(() => svc.close());

let taskCounter = 0;
const newTask = () => `task-${Date.now()}-${taskCounter++}`;

function decide(user: TestUser, task: string, stage: string, payload: unknown, headers: Record<string, string> = {}) {
  return svc.app.inject({
    method: 'POST',
    url: `/api/v1/reviews/${encodeURIComponent(task)}/stages/${encodeURIComponent(stage)}/decide`,
    headers: { ...user.headers, ...headers },
    payload: JSON.stringify(payload),
  });
}

function listStages(user: TestUser, task: string) {
  return svc.app.inject({ method: 'GET', url: `/api/v1/reviews/${encodeURIComponent(task)}/stages`, headers: user.headers });
}

async function decisionCount(task: string): Promise<number> {
  const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('stage_decisions').select('id').where('taskId', '=', task).execute();
  return rows.length;
}

describe('POST /api/v1/reviews/{task_id}/stages/{stage_name}/decide', () => {
  it('records the verdict: 201 StageDecisionResponse with the real decider', async () => {
    const task = newTask();
    const res = await decide(pair, task, 'code_review', { verdict: 'pass', reason: 'clean diff' }, { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      data: {
        task_id: task,
        stage_name: 'code_review',
        verdict: 'pass',
        reason: 'clean diff',
        decided_by: pair.username,
        decided_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
      error: null,
      error_detail: null,
      success: true,
    });
    const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('stage_decisions').select(['decidedById', 'decidedBy']).where('taskId', '=', task).execute();
    expect(rows).toEqual([{ decidedById: pair.id, decidedBy: pair.username }]);
  });

  it('takes every verdict, with or without a reason', async () => {
    const task = newTask();
    for (const [stage, payload] of [
      ['a', { verdict: 'pass', reason: null }],
      ['b', { verdict: 'fail', reason: 'tests red' }],
      ['c', { verdict: 'skip' }],
    ] as const) {
      const res = await decide(manager, task, stage, payload, { 'content-type': 'application/json' });
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toMatchObject({ verdict: payload.verdict, reason: 'reason' in payload ? payload.reason : null });
    }
  });

  it('a stage already decided is 409/4001 and the first decision stands', async () => {
    const task = newTask();
    const json = { 'content-type': 'application/json' };
    expect((await decide(manager, task, 'qa', { verdict: 'pass', reason: null }, json)).statusCode).toBe(201);
    const again = await decide(ceo, task, 'qa', { verdict: 'fail', reason: 'changed my mind' }, json);
    expect(again.statusCode).toBe(409);
    expect(again.json().error_detail).toMatchObject({ error_code: 4001, error_category: 'conflict' });
    const problem = await decide(ceo, task, 'qa', { verdict: 'fail', reason: null }, { ...json, accept: 'application/problem+json' });
    expect(problem.statusCode).toBe(409);
    expect(problem.headers['content-type']).toBe('application/problem+json');
    expect(problem.json()).toMatchObject({ status: 409, error_code: 4001 });
    expect((await listStages(observer, task)).json().data).toEqual([expect.objectContaining({ verdict: 'pass', decided_by: manager.username })]);
  });

  it('says why: "this stage has already been decided", over REST and tRPC alike', async () => {
    const task = newTask();
    await manager.caller.reviews.decideStage({ task_id: task, stage_name: 'qa', verdict: 'pass' });
    const again = await decide(ceo, task, 'qa', { verdict: 'fail', reason: null }, { 'content-type': 'application/json' });
    expect(again.json()).toMatchObject({ error: 'this stage has already been decided', error_detail: { error_code: 4001 } });
    const trpc = await svc.app.inject({
      method: 'POST',
      url: '/api/trpc/reviews.decideStage',
      headers: ceo.headers,
      payload: { task_id: task, stage_name: 'qa', verdict: 'skip' },
    });
    expect(trpc.statusCode).toBe(409);
    expect(trpc.json()).toMatchObject({
      error: { message: 'this stage has already been decided', data: { problem: { status: 409, error_code: 4001 } } },
    });
  });

  it('the same stage name on another task is a separate decision', async () => {
    const json = { 'content-type': 'application/json' };
    expect((await decide(manager, newTask(), 'qa', { verdict: 'pass', reason: null }, json)).statusCode).toBe(201);
    expect((await decide(manager, newTask(), 'qa', { verdict: 'pass', reason: null }, json)).statusCode).toBe(201);
  });

  it('of 10 concurrent decisions on one stage exactly one wins; the rest get 409/4001', async () => {
    const task = newTask();
    const deciders = [ceo, manager, pair];
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        decide(deciders[i % deciders.length]!, task, 'security', { verdict: i % 2 ? 'pass' : 'fail', reason: `r${i}` }, { 'content-type': 'application/json' }),
      ),
    );
    expect(responses.filter((r) => r.statusCode === 201)).toHaveLength(1);
    const losers = responses.filter((r) => r.statusCode !== 201);
    expect(losers).toHaveLength(9);
    for (const res of losers) expect(res.json().error_detail).toMatchObject({ error_code: 4001 });
    expect(await decisionCount(task)).toBe(1);
  });

  it('is open to ceo, manager and pair_programmer; board_member and observer get 403/1001', async () => {
    const task = newTask();
    const json = { 'content-type': 'application/json' };
    for (const [i, user] of [ceo, manager, pair].entries()) {
      expect((await decide(user, task, `stage-${i}`, { verdict: 'pass', reason: null }, json)).statusCode).toBe(201);
    }
    for (const user of [board, observer]) {
      const res = await decide(user, task, 'forbidden', { verdict: 'pass', reason: null }, json);
      expect(res.statusCode).toBe(403);
      expect(res.json().error_detail).toMatchObject({ error_code: 1001 });
    }
    const anonymous = await svc.app.inject({
      method: 'POST',
      url: `/api/v1/reviews/${task}/stages/x/decide`,
      payload: { verdict: 'pass', reason: null },
    });
    expect(anonymous.statusCode).toBe(401);
    expect(await decisionCount(task)).toBe(3);
  });

  it.each([
    ['an unknown verdict', { verdict: 'maybe', reason: null }, /^body\.verdict: must be one of pass, fail, skip/],
    ['a missing verdict', { reason: null }, /^body\.verdict: /],
    ['an empty reason', { verdict: 'fail', reason: '' }, /^body\.reason: too short/],
    ['a blank reason', { verdict: 'fail', reason: '  ' }, /^body\.reason: must not be blank/],
    ['a reason over 4096 characters', { verdict: 'fail', reason: 'r'.repeat(4097) }, /^body\.reason: too long/],
    ['an unknown field', { verdict: 'pass', reason: null, decided_by: 'someone' }, /^body: unknown field decided_by/],
  ])('%s is 400/2001 and nothing is recorded', async (_name, payload, detail) => {
    const task = newTask();
    const res = await decide(manager, task, 'lint', payload, { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
    expect(res.json().error).toMatch(detail);
    expect(await decisionCount(task)).toBe(0);
  });

  it('path names over 128 characters are 400/2001', async () => {
    const json = { 'content-type': 'application/json' };
    for (const [task, stage] of [
      ['t'.repeat(129), 'qa'],
      [newTask(), 's'.repeat(129)],
    ]) {
      const res = await decide(manager, task!, stage!, { verdict: 'pass', reason: null }, json);
      expect(res.statusCode).toBe(400);
      expect(res.json().error_detail).toMatchObject({ error_code: 2001 });
      expect(res.json().error).toMatch(/^path\./);
    }
  });
});

describe('GET /api/v1/reviews/{task_id}/stages', () => {
  it('lists the task’s decisions in decision order to any signed-in user', async () => {
    const task = newTask();
    const json = { 'content-type': 'application/json' };
    for (const stage of ['design', 'code_review', 'qa', 'release']) {
      expect((await decide(pair, task, stage, { verdict: 'pass', reason: null }, json)).statusCode).toBe(201);
    }
    await decide(pair, newTask(), 'other-task', { verdict: 'pass', reason: null }, json);
    const res = await listStages(observer, task);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: true, error: null, error_detail: null });
    expect(res.json()).not.toHaveProperty('pagination');
    expect(res.json<{ data: { stage_name: string }[] }>().data.map((d) => d.stage_name)).toEqual(['design', 'code_review', 'qa', 'release']);
    expect(res.json().data[0]).toEqual({
      task_id: task,
      stage_name: 'design',
      verdict: 'pass',
      reason: null,
      decided_by: pair.username,
      decided_at: expect.any(String),
    });
  });

  it('is an empty list for an unknown task', async () => {
    const res = await listStages(observer, 'never-heard-of-it');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([]);
  });

  it('is 401/1000 without credentials, also as a ProblemDetail', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/reviews/x/stages', headers: { accept: 'application/problem+json' } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
  });

  it('the tRPC procedures are reviews.decideStage and reviews.listStages', async () => {
    const task = newTask();
    expect(await manager.caller.reviews.decideStage({ task_id: task, stage_name: 'qa', verdict: 'skip', reason: null })).toMatchObject({
      verdict: 'skip',
      decided_by: manager.username,
    });
    expect(await observer.caller.reviews.listStages({ task_id: task })).toHaveLength(1);
  });
});
