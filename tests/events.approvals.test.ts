// CONTRACT §4.8: every approval change writes its event in its own transaction; data is the REST response.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { expireOverdueApprovals } from '../src/services/approvals/expiry.ts';
import { listen, TestSocket } from './helpers/events.ts';
import type { TestService } from './helpers/service.ts';
import { createUser, startWithCeo, type TestUser } from './helpers/users.ts';

let svc: TestService;
let base: string;
let manager: TestUser;
let board: TestUser;
beforeAll(async () => {
  ({ svc } = await startWithCeo());
  base = await listen(svc);
  manager = await createUser(svc, { role: 'manager' });
  board = await createUser(svc, { role: 'board_member' });
});
afterAll(() => svc.close());

async function subscribed(user: TestUser): Promise<TestSocket> {
  const socket = await TestSocket.open(base, user);
  expect((await socket.request({ type: 'subscribe', channels: ['approvals'] })).type).toBe('subscribed');
  return socket;
}

const post = (url: string, user: TestUser, body: unknown) =>
  svc.app.inject({ method: 'POST', url, headers: { ...user.headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

const approvalBody = (extra: object = {}) => ({ action_type: 'deploy:production', title: `ship ${randomUUID()}`, description: 'release', risk_level: 'high', ...extra });

describe('approval events', () => {
  it('POST /approvals → approval.created with the 201 body as data and the requester as actor', async () => {
    const socket = await subscribed(board);
    const res = await post('/api/v1/approvals', manager, approvalBody());
    expect(res.statusCode).toBe(201);
    const [event] = await socket.events(1);
    expect(event).toMatchObject({ type: 'approval.created', channel: 'approvals', actor: manager.username });
    expect(event?.data).toEqual(res.json().data);
    socket.close();
  });

  it('approve → approval.approved and reject → approval.rejected, data equal to the decision response', async () => {
    const first = (await post('/api/v1/approvals', manager, approvalBody())).json().data;
    const second = (await post('/api/v1/approvals', manager, approvalBody())).json().data;
    const socket = await subscribed(manager);
    const approved = await post(`/api/v1/approvals/${first.id}/approve`, board, { comment: 'ok' });
    const rejected = await post(`/api/v1/approvals/${second.id}/reject`, board, { reason: 'not now' });
    // The two creations may still be on their way to the new socket; only the decisions matter here.
    const events: Awaited<ReturnType<TestSocket['events']>> = [];
    while (events.length < 2) events.push(...(await socket.events(1)).filter((e) => e.type !== 'approval.created'));
    expect(events.map((e) => e.type)).toEqual(['approval.approved', 'approval.rejected']);
    expect(events[0]?.data).toEqual(approved.json().data);
    expect(events[1]?.data).toEqual(rejected.json().data);
    expect(events[0]?.actor).toBe(board.username);
    socket.close();
  });

  it('a refused decision (409) writes no event', async () => {
    const created = (await post('/api/v1/approvals', manager, approvalBody())).json().data;
    expect((await post(`/api/v1/approvals/${created.id}/approve`, board, {})).statusCode).toBe(200);
    const count = async () => (await kysely(svc.deps.orm.em.fork()).selectFrom('events').select('id').execute()).length;
    const before = await count();
    expect((await post(`/api/v1/approvals/${created.id}/reject`, board, { reason: 'late' })).statusCode).toBe(409);
    expect((await post(`/api/v1/approvals/${created.id}/approve`, board, {})).statusCode).toBe(409);
    expect(await count()).toBe(before);
  });

  it('the expiry sweep → approval.expired with actor null, data the approval as GET now shows it', async () => {
    const created = (await post('/api/v1/approvals', manager, approvalBody({ ttl_seconds: 60 }))).json().data;
    const socket = await subscribed(board);
    const later = new Date(Date.now() + 61_000);
    expect(await expireOverdueApprovals(svc.deps.orm.em.fork(), later)).toBeGreaterThanOrEqual(1);
    let expired: Awaited<ReturnType<TestSocket['events']>>[number] | undefined;
    while (!expired) expired = (await socket.events(1)).find((e) => e.type === 'approval.expired' && e.data.id === created.id);
    expect(expired).toMatchObject({ type: 'approval.expired', actor: null });
    expect(expired?.data).toMatchObject({ id: created.id, status: 'expired', seconds_remaining: 0 });
    socket.close();
  });
});
