// CONTRACT §4.8: a stage decision writes one `review.stage_decided` event in its transaction; data is the 201 body.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countEvents, eventsUpToNow, listen, TestSocket } from './helpers/events.ts';
import type { TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

let svc: TestService;
let base: string;
let pair: TestUser;
let observer: TestUser;
beforeAll(async () => {
  ({ svc } = await startWithCeo());
  base = await listen(svc);
  [pair, observer] = await Promise.all([createUser(svc, { role: 'pair_programmer' }), createUser(svc, { role: 'observer' })]);
});
afterAll(() => svc.close());

/** An observer's socket on `reviews` (and `users` for the fence), with earlier tests' events taken off. */
async function watch(): Promise<TestSocket> {
  const socket = await TestSocket.open(base, observer);
  expect((await socket.request({ type: 'subscribe', channels: ['reviews', 'users'] })).type).toBe('subscribed');
  await eventsUpToNow(svc, socket);
  return socket;
}

function decide(user: TestUser, task: string, stage: string, body: object, headers: Record<string, string> = {}) {
  return svc.app.inject({
    method: 'POST',
    url: `/api/v1/reviews/${encodeURIComponent(task)}/stages/${encodeURIComponent(stage)}/decide`,
    headers: { ...user.headers, ...headers },
    payload: body,
  });
}

const reviewEvents = async (socket: TestSocket) => (await eventsUpToNow(svc, socket)).filter((e) => e.channel === 'reviews');

describe('POST /reviews/{task_id}/stages/{stage_name}/decide → review.stage_decided', () => {
  it('data is the 201 StageDecisionResponse, the decider is the actor', async () => {
    const socket = await watch();
    const before = await countEvents(svc, 'review.stage_decided');
    const res = await decide(pair, `task-${randomUUID()}`, 'code_review', { verdict: 'pass', reason: 'looks right' });
    expect(res.statusCode).toBe(201);
    const events = await reviewEvents(socket);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'review.stage_decided', channel: 'reviews', actor: pair.username });
    expect(events[0]?.data).toEqual(res.json().data);
    expect(await countEvents(svc, 'review.stage_decided')).toBe(before + 1);
    socket.close();
  });

  it('a second decision of the stage (409/4001) writes no event', async () => {
    const task = `task-${randomUUID()}`;
    expect((await decide(pair, task, 'qa', { verdict: 'fail', reason: 'flaky' })).statusCode).toBe(201);
    const socket = await watch();
    const before = await countEvents(svc, 'review.stage_decided');
    const again = await decide(pair, task, 'qa', { verdict: 'pass', reason: null });
    expect(again.statusCode).toBe(409);
    expect(again.json().error_detail.error_code).toBe(4001);
    expect(await countEvents(svc, 'review.stage_decided')).toBe(before);
    expect(await reviewEvents(socket)).toEqual([]);
    socket.close();
  });

  it('refused for a role that may not decide (403) or a bad body (400): no event', async () => {
    const socket = await watch();
    const before = await countEvents(svc, 'review.stage_decided');
    expect((await decide(observer, `task-${randomUUID()}`, 'qa', { verdict: 'pass', reason: null })).statusCode).toBe(403);
    expect((await decide(pair, `task-${randomUUID()}`, 'qa', { verdict: 'maybe', reason: null })).statusCode).toBe(400);
    expect(await countEvents(svc, 'review.stage_decided')).toBe(before);
    expect(await reviewEvents(socket)).toEqual([]);
    socket.close();
  });

  it('an idempotent replay (same Idempotency-Key and body) answers the first result again and writes no second event', async () => {
    const socket = await watch();
    const before = await countEvents(svc, 'review.stage_decided');
    const task = `task-${randomUUID()}`;
    const headers = { 'idempotency-key': randomUUID() };
    const first = await decide(pair, task, 'security', { verdict: 'skip', reason: null }, headers);
    const replay = await decide(pair, task, 'security', { verdict: 'skip', reason: null }, headers);
    expect(first.statusCode).toBe(201);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const events = await reviewEvents(socket);
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toEqual(first.json().data);
    expect(await countEvents(svc, 'review.stage_decided')).toBe(before + 1);
    socket.close();
  });
});
