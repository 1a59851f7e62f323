import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let writer: TestUser;
let deciders: TestUser[];

beforeAll(async () => {
  svc = await startTestService();
  writer = await createUser(svc, { role: 'pair_programmer' });
  deciders = await Promise.all([
    createUser(svc, { role: 'ceo' }),
    createUser(svc, { role: 'manager' }),
    createUser(svc, { role: 'manager' }),
    createUser(svc, { role: 'board_member' }),
    createUser(svc, { role: 'board_member' }),
  ]);
});
afterAll(() => svc.close());

async function newApproval(): Promise<string> {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/api/v1/approvals',
    headers: writer.headers,
    payload: { action_type: 'deploy:production', title: 'Race', description: 'Who decides first?', risk_level: 'critical', ttl_seconds: 3600 },
  });
  expect(res.statusCode).toBe(201);
  return res.json<{ data: { id: string } }>().data.id;
}

function fire(id: string, n: number, verbOf: (i: number) => 'approve' | 'reject') {
  return Promise.all(
    Array.from({ length: n }, (_, i) => {
      const verb = verbOf(i);
      const user = deciders[i % deciders.length]!;
      return svc.app.inject({
        method: 'POST',
        url: `/api/v1/approvals/${id}/${verb}`,
        headers: user.headers,
        payload: verb === 'approve' ? { comment: `by ${i}` } : { reason: `by ${i}` },
      });
    }),
  );
}

async function stored(id: string) {
  const row = await kysely(svc.deps.orm.em.fork())
    .selectFrom('approvals')
    .select(['status', 'decidedBy', 'decisionReason'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row && { status: row.status, decided_by: row.decidedBy, decision_reason: row.decisionReason };
}

describe('concurrent decisions on one approval', () => {
  it.each([
    ['approve', () => 'approve' as const],
    ['reject', () => 'reject' as const],
    ['mixed approve/reject', (i: number) => (i % 2 === 0 ? ('approve' as const) : ('reject' as const))],
  ])('20 concurrent %s calls: exactly one 200, the other 19 get 409/4000', async (_name, verbOf) => {
    const id = await newApproval();
    const responses = await fire(id, 20, verbOf);
    const winners = responses.filter((r) => r.statusCode === 200);
    const losers = responses.filter((r) => r.statusCode !== 200);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(19);
    for (const res of losers) {
      expect(res.statusCode).toBe(409);
      expect(res.json().error_detail).toMatchObject({ error_code: 4000, error_category: 'conflict' });
    }
    // The stored decision is the winner's, not a later overwrite.
    const won = winners[0]!.json().data;
    expect(await stored(id)).toEqual({ status: won.status, decided_by: won.decided_by, decision_reason: won.decision_reason });
  });
});
