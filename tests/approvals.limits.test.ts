import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let writer: TestUser;
let approver: TestUser;

const ONE = { limit: 1, window_s: 60 };

beforeAll(async () => {
  svc = await startTestService({
    env: { RATE_LIMITS: JSON.stringify({ 'approvals.create': { limit: 3, window_s: 60 }, 'approvals.approve': ONE, 'approvals.reject': ONE, 'reviews.decide_stage': ONE }) },
  });
  [writer, approver] = await Promise.all([createUser(svc, { role: 'manager' }), createUser(svc, { role: 'board_member' })]);
});
afterAll(() => svc.close());

function post(user: TestUser, url: string, payload: object) {
  return svc.app.inject({ method: 'POST', url: `/api/v1${url}`, headers: user.headers, payload });
}

async function newApproval(): Promise<string> {
  const res = await post(writer, '/approvals', { action_type: 'deploy:production', title: 't', description: 'd', risk_level: 'low' });
  expect(res.statusCode).toBe(201);
  return res.json<{ data: { id: string } }>().data.id;
}

describe('per-operation limits declared by the approval and review procedures', () => {
  it('approvals.create, approvals.approve and approvals.reject each have their own window (429/5001)', async () => {
    const [a, b, c] = [await newApproval(), await newApproval(), await newApproval()];
    const fourth = await post(writer, '/approvals', { action_type: 'deploy:production', title: 't', description: 'd', risk_level: 'low' });
    expect(fourth.statusCode).toBe(429);
    expect(fourth.json().error_detail).toMatchObject({ error_code: 5001 });

    const approved = await post(approver, `/approvals/${a}/approve`, {});
    expect(approved.statusCode).toBe(200);
    expect(approved.headers['ratelimit-limit']).toBe('1');
    expect((await post(approver, `/approvals/${b}/approve`, {})).statusCode).toBe(429);
    // Rejecting is a separate operation with its own budget.
    expect((await post(approver, `/approvals/${b}/reject`, { reason: 'no' })).statusCode).toBe(200);
    const refused = await post(approver, `/approvals/${c}/reject`, { reason: 'no' });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error_detail).toMatchObject({ error_code: 5001, retryable: true });
  });

  it('reviews.decide_stage (429/5001)', async () => {
    expect((await post(writer, '/reviews/t1/stages/qa/decide', { verdict: 'pass', reason: null })).statusCode).toBe(201);
    const res = await post(writer, '/reviews/t1/stages/security/decide', { verdict: 'pass', reason: null });
    expect(res.statusCode).toBe(429);
    expect(res.json().error_detail).toMatchObject({ error_code: 5001 });
  });
});
