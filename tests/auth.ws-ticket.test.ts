// POST /auth/ws-ticket and redeemTicket: single use, 30 s, at most 5 pending per user, any instance redeems.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PENDING_TICKETS, redeemTicket } from '../src/services/auth/wsTickets.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';
import type { Clock } from '../src/contracts/clock.ts';

const PROBLEM = { accept: 'application/problem+json' };

// Starts at the real time: lucia judges access-token expiry by the system clock.
let current = new Date();
const clock: Clock = { now: () => current };

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMIT_STORE: 'memory' }, clock });
});
afterAll(() => svc.close());

const redeem = (service: TestService, ticket: string) => redeemTicket({ em: service.deps.orm.em.fork(), clock: service.deps.clock }, ticket);

describe('POST /auth/ws-ticket', () => {
  it('answers 200 {ticket, expires_in: 30} with a ticket of at least 256 bits', async () => {
    const user = await createUser(svc);
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: user.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { ticket: expect.stringMatching(/^[A-Za-z0-9_-]{43,}$/), expires_in: 30 }, error: null, error_detail: null, success: true });
    expect(res.json().data.ticket).not.toBe(user.token);
  });

  it('the 6th unredeemed ticket is 409/4000, in both formats; redeeming one makes room', async () => {
    const user = await createUser(svc);
    const tickets: string[] = [];
    for (let i = 0; i < MAX_PENDING_TICKETS; i++) tickets.push((await user.caller.auth.wsTicket()).ticket);
    expect(new Set(tickets).size).toBe(5);
    const problem = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: { ...user.headers, ...PROBLEM } });
    expect(problem.statusCode).toBe(409);
    expect(problem.json()).toMatchObject({ status: 409, error_code: 4000, error_category: 'conflict' });
    const envelope = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: user.headers });
    expect(envelope.json()).toMatchObject({ success: false, error_detail: { error_code: 4000 } });

    expect(await redeem(svc, tickets[0] ?? '')).not.toBeNull();
    await expect(user.caller.auth.wsTicket()).resolves.toMatchObject({ expires_in: 30 });
  });

  it('the cap is per user', async () => {
    const [alice, bob] = await Promise.all([createUser(svc), createUser(svc)]);
    for (let i = 0; i < MAX_PENDING_TICKETS; i++) await alice.caller.auth.wsTicket();
    await expect(bob.caller.auth.wsTicket()).resolves.toMatchObject({ expires_in: 30 });
  });

  it('ten concurrent requests of one user: exactly five tickets, five 409/4000', async () => {
    const user = await createUser(svc);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => user.caller.auth.wsTicket()));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ errorCode: 4000 });
  });

  it('expired tickets no longer count against the cap', async () => {
    const user = await createUser(svc);
    for (let i = 0; i < MAX_PENDING_TICKETS; i++) await user.caller.auth.wsTicket();
    current = new Date(current.getTime() + 31_000);
    await expect(user.caller.auth.wsTicket()).resolves.toMatchObject({ expires_in: 30 });
  });

  it('without credentials is 401/1000', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: PROBLEM });
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
  });
});

describe('redeemTicket', () => {
  it('succeeds once with the user and session; the second redemption returns null', async () => {
    const user = await createUser(svc);
    const { ticket } = await user.caller.auth.wsTicket();
    expect(await redeem(svc, ticket)).toEqual({ userId: user.id, sessionId: user.sessionId, apiKey: null, username: user.username, role: user.role, mustChangePassword: false });
    expect(await redeem(svc, ticket)).toBeNull();
  });

  it('of concurrent redemptions of one ticket, exactly one succeeds', async () => {
    const user = await createUser(svc);
    const { ticket } = await user.caller.auth.wsTicket();
    const results = await Promise.all(Array.from({ length: 5 }, () => redeem(svc, ticket)));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
  });

  it('an unknown ticket returns null', async () => {
    expect(await redeem(svc, 'T'.repeat(43))).toBeNull();
  });

  it('an expired ticket (after 30 s) returns null; just before, it works', async () => {
    const user = await createUser(svc);
    const early = (await user.caller.auth.wsTicket()).ticket;
    const late = (await user.caller.auth.wsTicket()).ticket;
    current = new Date(current.getTime() + 29_000);
    expect(await redeem(svc, early)).not.toBeNull();
    current = new Date(current.getTime() + 1_000);
    expect(await redeem(svc, late)).toBeNull();
  });

  it('a ticket of a session that was logged out in the meantime returns null', async () => {
    const user = await createUser(svc);
    const { ticket } = await user.caller.auth.wsTicket();
    await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: user.headers });
    expect(await redeem(svc, ticket)).toBeNull();
  });

  it('a ticket issued on one instance is redeemed on a second instance on the same database, once', async () => {
    const second = await startTestService({ env: { RATE_LIMIT_STORE: 'memory' }, databaseUrl: svc.databaseUrl, clock });
    try {
      const user = await createUser(svc);
      const { ticket } = await user.caller.auth.wsTicket();
      expect(await redeem(second, ticket)).toEqual({ userId: user.id, sessionId: user.sessionId, apiKey: null, username: user.username, role: user.role, mustChangePassword: false });
      expect(await redeem(svc, ticket)).toBeNull();
    } finally {
      await second.close();
    }
  });
});
