// Waiting for a decision (CONTRACT §4.11): GET /approvals/{id}?wait_s=N held until decided, expired or N s, on any instance.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContextInner, recordingSink } from '../src/context/index.ts';
import { kysely } from '../src/db/kysely.ts';
import { createCaller } from '../src/routers/index.ts';
import { MAX_WAITS_PER_USER } from '../src/services/approvals/waiting.ts';
import type { Clock } from '../src/contracts/clock.ts';
import { sleep, until } from './helpers/events.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

// Real time plus an offset a test may move forward, so an approval (ttl >= 60 s) can be brought within a second of its deadline.
const clock: Clock & { offsetMs: number } = { offsetMs: 0, now: () => new Date(Date.now() + clock.offsetMs) };

// Rate limits off: the cap on waits must hold anyway (CONTRACT §5 rev. 3).
const env = { RATE_LIMITS_ENABLED: 'false' };

let a: TestService;
let b: TestService;
let writer: TestUser;
let approverOnB: TestUser;
let agent: TestUser;
beforeAll(async () => {
  a = await startTestService({ env, clock });
  // A second instance on the same database.
  b = await startTestService({ env, clock, databaseUrl: a.databaseUrl });
  writer = await createUser(a, { role: 'pair_programmer' });
  approverOnB = await createUser(b, { role: 'manager' });
  agent = await createUser(a, { role: 'observer' });
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const BODY = { action_type: 'deploy:production', title: 'Ship', description: 'Release', risk_level: 'low' } as const;

async function pending(ttl: number | null = 3600): Promise<string> {
  return (await writer.caller.approvals.create({ ...BODY, ttl_seconds: ttl })).id;
}

/** A caller of `svc` as `user` whose calls abort with `controller`, and the sink that receives its headers. */
function callerOf(svc: TestService, user: TestUser, controller?: AbortController) {
  const sink = recordingSink();
  const caller = createCaller(createContextInner({ deps: svc.deps, credentials: { bearerToken: user.token }, response: sink }), controller ? { signal: controller.signal } : {});
  return { caller, sink };
}

function getOn(svc: TestService, path: string, user: TestUser = agent) {
  return svc.app.inject({ method: 'GET', url: `/api/v1${path}`, headers: user.headers });
}

/** Settles with when it settled, to time an answer against the moment something else happened. */
async function settledAt<T>(promise: Promise<T>): Promise<{ value: T; at: number }> {
  const value = await promise;
  return { value, at: performance.now() };
}

/** Waits of `user` recorded in the shared table (every instance's). */
async function slotsOf(user: TestUser): Promise<number> {
  const rows = await kysely(a.deps.orm.em.fork()).selectFrom('approval_waits').select('id').where('userId', '=', user.id).execute();
  return rows.length;
}

describe('a pending approval holds the answer', () => {
  it('a decision made through another instance ends the wait within 1 s, with the decided state and its ETag', async () => {
    const id = await pending();
    const { caller, sink } = callerOf(a, agent);
    const waiting = settledAt(caller.approvals.get({ approval_id: id, wait_s: 30 }));
    await until(() => a.deps.approvalWaits.size === 1, 3000, 'the wait to be held');
    await sleep(200);
    await approverOnB.caller.approvals.approve({ approval_id: id, comment: 'go' });
    const decidedAt = performance.now();
    const { value, at } = await waiting;
    expect(at - decidedAt).toBeLessThan(1000);
    expect(value).toMatchObject({ id, status: 'approved', decided_by: approverOnB.username, decision_reason: 'go' });
    // The same tag a plain read gives now.
    const plain = await getOn(a, `/approvals/${id}`);
    expect(sink.headers.get('etag')).toBe(plain.headers.etag);
  });

  it('over HTTP as well: a rejection through B ends a GET held on A within 1 s (200, ETag)', async () => {
    const id = await pending();
    const waiting = settledAt(getOn(a, `/approvals/${id}?wait_s=30`));
    await until(() => a.deps.approvalWaits.size === 1, 3000, 'the wait to be held');
    const rejected = await b.app.inject({ method: 'POST', url: `/api/v1/approvals/${id}/reject`, headers: approverOnB.headers, payload: { reason: 'no' } });
    expect(rejected.statusCode).toBe(200);
    const decidedAt = performance.now();
    const { value: res, at } = await waiting;
    expect(at - decidedAt).toBeLessThan(1000);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id, status: 'rejected', decision_reason: 'no' });
    expect(res.headers.etag).toBe((await getOn(b, `/approvals/${id}`)).headers.etag);
  });

  it('ends within 1 s of expires_at with status expired (and its approval.expired event), without anyone deciding', async () => {
    const id = await pending(60);
    const { expires_at } = await agent.caller.approvals.get({ approval_id: id });
    // Bring the deadline 1.5 s ahead.
    clock.offsetMs += 58_500;
    const deadline = performance.now() + (Date.parse(expires_at ?? '') - clock.now().getTime());
    const { value, at } = await settledAt(callerOf(a, agent).caller.approvals.get({ approval_id: id, wait_s: 10 }));
    expect(value).toMatchObject({ id, status: 'expired', seconds_remaining: 0 });
    expect(at - deadline).toBeGreaterThanOrEqual(-5);
    expect(at - deadline).toBeLessThan(1000);
    const events = await kysely(a.deps.orm.em.fork()).selectFrom('events').select('data').where('type', '=', 'approval.expired').execute();
    expect(events.filter((e) => e.data.id === id)).toHaveLength(1);
  });

  it('when wait_s passes with nothing happening: 200 with the approval still pending and its current ETag', async () => {
    const id = await pending();
    const started = performance.now();
    const res = await getOn(a, `/approvals/${id}?wait_s=1`);
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(990);
    expect(took).toBeLessThan(2000);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id, status: 'pending' });
    expect(res.headers.etag).toBe((await getOn(a, `/approvals/${id}`)).headers.etag);
  });

  it('a decided approval is answered at once, and so is one that does not exist (404/3000)', async () => {
    const id = await pending();
    await approverOnB.caller.approvals.approve({ approval_id: id, comment: null });
    const started = performance.now();
    const res = await getOn(a, `/approvals/${id}?wait_s=60`);
    expect(res.json().data).toMatchObject({ status: 'approved' });
    const missing = await getOn(a, '/approvals/00000000-0000-4000-8000-000000000000?wait_s=60');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error_detail).toMatchObject({ error_code: 3000 });
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe(`at most ${String(MAX_WAITS_PER_USER)} waits per user`, () => {
  it(`the ${String(MAX_WAITS_PER_USER + 1)}st wait of a user, counted on every instance, is 429/5002 with retry_after 1 (rate limits off); a wait that ends frees its slot`, async () => {
    const user = await createUser(a, { role: 'observer' });
    const id = await pending();
    const controllers = Array.from({ length: MAX_WAITS_PER_USER }, () => new AbortController());
    // Half held on each instance.
    const held = controllers.map((controller, i) => callerOf(i % 2 === 0 ? a : b, user, controller).caller.approvals.get({ approval_id: id, wait_s: 30 }));
    await until(async () => (await slotsOf(user)) === MAX_WAITS_PER_USER, 5000, 'every wait to be held');

    for (const svc of [a, b]) {
      const refused = await svc.app.inject({ method: 'GET', url: `/api/v1/approvals/${id}?wait_s=5`, headers: { ...user.headers, ...PROBLEM } });
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ error_code: 5002, retryable: true, retry_after: 1 });
      expect(refused.headers['retry-after']).toBe('1');
    }
    // Another user is not affected, and the same user may still read without waiting.
    expect((await getOn(a, `/approvals/${id}?wait_s=1`)).statusCode).toBe(200);
    expect((await getOn(a, `/approvals/${id}`, user)).statusCode).toBe(200);

    controllers[0]?.abort();
    await until(async () => (await slotsOf(user)) === MAX_WAITS_PER_USER - 1, 1000, 'the aborted wait to give its slot back');
    const next = callerOf(a, user).caller.approvals.get({ approval_id: id, wait_s: 1 });
    await expect(next).resolves.toMatchObject({ status: 'pending' });

    for (const controller of controllers) controller.abort();
    await Promise.all(held);
    await until(async () => (await slotsOf(user)) === 0, 1000, 'every slot to be given back');
  });

  it('a client that disconnects frees its slot at once and its wait stops', async () => {
    const user = await createUser(a, { role: 'observer' });
    const id = await pending();
    const address = await a.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(address);
    const requests = Array.from({ length: MAX_WAITS_PER_USER }, () => {
      const req = http.get({ host: '127.0.0.1', port, path: `/api/v1/approvals/${id}?wait_s=30`, headers: user.headers, agent: false });
      req.on('error', () => undefined);
      return req;
    });
    await until(async () => (await slotsOf(user)) === MAX_WAITS_PER_USER, 5000, 'every wait to be held');
    const heldBefore = a.deps.approvalWaits.size;

    requests[0]?.destroy();
    const gone = performance.now();
    await until(async () => (await slotsOf(user)) === MAX_WAITS_PER_USER - 1, 1000, 'the slot to be freed');
    expect(performance.now() - gone).toBeLessThan(500);
    expect(a.deps.approvalWaits.size).toBe(heldBefore - 1);
    // The freed slot is usable at once.
    const taken = settledAt(getOn(a, `/approvals/${id}?wait_s=1`, user));
    expect((await taken).value.statusCode).toBe(200);

    for (const req of requests) req.destroy();
    await until(async () => (await slotsOf(user)) === 0, 2000, 'every slot to be freed');
  });
});

describe('wait_s', () => {
  it.each(['0', '61', '1.5', 'abc', '-1', '1e1', '0x10'])('wait_s=%s is 400/2001 naming query.wait_s', async (value) => {
    const id = await pending();
    const res = await a.app.inject({ method: 'GET', url: `/api/v1/approvals/${id}?wait_s=${value}`, headers: { ...agent.headers, ...PROBLEM } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error_code: 2001 });
    expect(res.json().detail).toContain('query.wait_s');
  });

  it('an empty wait_s is no wait: answered at once', async () => {
    const id = await pending();
    const started = performance.now();
    const res = await getOn(a, `/approvals/${id}?wait_s=`);
    expect(res.statusCode).toBe(200);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('tRPC approvals.get refuses the same values (BAD_REQUEST)', async () => {
    const id = await pending();
    for (const wait_s of [0, 61, 1.5]) await expect(agent.caller.approvals.get({ approval_id: id, wait_s })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('the OpenAPI document describes wait_s (integer 1..60) and the 429/5002 of a full cap', async () => {
    type Operation = { parameters: { name: string; required?: boolean }[]; responses: Record<string, { description?: string }> };
    const doc = (await a.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<{ paths: Record<string, { get: Operation }> }>();
    const operation = doc.paths['/approvals/{approval_id}']?.get;
    const parameter = operation?.parameters.find((p) => p.name === 'wait_s');
    expect(parameter).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 1, maximum: 60 } });
    expect(parameter?.required ?? false).toBe(false);
    expect(operation?.responses['429']?.description).toContain('5002');
  });
});

describe('shutdown', () => {
  it('answers a waiting request with the current state before the drain ends', async () => {
    const own = await startTestService({ env, databaseUrl: a.databaseUrl });
    const user = await createUser(own, { role: 'observer' });
    const id = await pending();
    const waiting = settledAt(own.app.inject({ method: 'GET', url: `/api/v1/approvals/${id}?wait_s=60`, headers: user.headers }));
    await until(() => own.deps.approvalWaits.size === 1, 3000, 'the wait to be held');
    const closingAt = performance.now();
    const closed = settledAt(own.close());
    const { value: res, at } = await waiting;
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id, status: 'pending' });
    expect(at - closingAt).toBeLessThan(2000);
    expect(at).toBeLessThanOrEqual((await closed).at);
  });
});
