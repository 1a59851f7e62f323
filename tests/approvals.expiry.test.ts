import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContextInner, recordingSink } from '../src/context/index.ts';
import { kysely } from '../src/db/kysely.ts';
import { createCaller } from '../src/routers/index.ts';
import { approvalExpiryJob, expireOverdueApprovals } from '../src/services/approvals/expiry.ts';
import type { Clock } from '../src/contracts/clock.ts';
import { until } from './helpers/events.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

// Starts at the real time (sessions are checked against it too) and only ever moves forward by minutes.
const clock = { current: Date.now(), now: () => new Date(clock.current) };
const advance = (seconds: number) => {
  clock.current += seconds * 1000;
};

let svc: TestService;
let writer: TestUser;
let approver: TestUser;

beforeAll(async () => {
  // No jobs in the background: the sweep would write down what these tests expect only a read to write.
  svc = await startTestService({ clock, env: { RATE_LIMITS_ENABLED: 'false' }, jobTypes: [] });
  [writer, approver] = await Promise.all([createUser(svc, { role: 'pair_programmer' }), createUser(svc, { role: 'manager' })]);
});
afterAll(() => svc.close());

const BODY = { action_type: 'deploy:production', title: 'Ship', description: 'Release', risk_level: 'low' } as const;

async function create(ttl: number | null) {
  return writer.caller.approvals.create({ ...BODY, ttl_seconds: ttl });
}

async function storedStatus(id: string): Promise<string | undefined> {
  const row = await kysely(svc.deps.orm.em.fork()).selectFrom('approvals').select('status').where('id', '=', id).executeTakeFirst();
  return row?.status;
}

type Page = { data: { id: string; status: string }[]; pagination: { has_more: boolean } };

function httpGet(path: string) {
  return svc.app.inject({ method: 'GET', url: `/api/v1${path}`, headers: approver.headers });
}

describe('seconds_remaining and urgency_level', () => {
  it.each([
    [60, 'critical'],
    [3600, 'critical'],
    [3601, 'high'],
    [14_400, 'high'],
    [14_401, 'normal'],
    [604_800, 'normal'],
  ] as const)('a fresh approval with ttl %i s has that many seconds left and is %s', async (ttl, urgency) => {
    const approval = await create(ttl);
    expect(approval).toMatchObject({ seconds_remaining: ttl, urgency_level: urgency });
  });

  it('no expiry: seconds_remaining null, urgency no_expiry', async () => {
    expect(await create(null)).toMatchObject({ expires_at: null, seconds_remaining: null, urgency_level: 'no_expiry' });
  });

  it('counts down with the clock, rounding partial seconds up', async () => {
    const approval = await create(3700);
    advance(99.5);
    expect(await approver.caller.approvals.get({ approval_id: approval.id })).toMatchObject({ seconds_remaining: 3601, urgency_level: 'high' });
    advance(1);
    expect(await approver.caller.approvals.get({ approval_id: approval.id })).toMatchObject({ seconds_remaining: 3600, urgency_level: 'critical' });
  });

  it('is 0 once decided (the clock stops), null when there never was an expiry', async () => {
    const timed = await create(7200);
    expect(await approver.caller.approvals.approve({ approval_id: timed.id, comment: null })).toMatchObject({ seconds_remaining: 0, status: 'approved' });
    const open = await create(null);
    expect(await approver.caller.approvals.reject({ approval_id: open.id, reason: 'no' })).toMatchObject({ seconds_remaining: null, urgency_level: 'no_expiry' });
  });
});

describe('expiry (pending → expired)', () => {
  it('an approval past its expires_at reads expired, with seconds_remaining 0 and no decider', async () => {
    const approval = await create(60);
    advance(60);
    const res = await httpGet(`/approvals/${approval.id}`);
    expect(res.json().data).toMatchObject({ status: 'expired', seconds_remaining: 0, decided_at: null, decided_by: null, decision_reason: null });
  });

  it('is persisted as expired by the read that meets it', async () => {
    const approval = await create(60);
    advance(61);
    expect(await storedStatus(approval.id)).toBe('pending');
    await httpGet(`/approvals/${approval.id}`);
    expect(await storedStatus(approval.id)).toBe('expired');
  });

  it('cannot be approved or rejected once expired (409/4000), even before anything wrote it', async () => {
    const approval = await create(60);
    advance(60); // exactly at expires_at: no longer decidable
    for (const verb of ['approve', 'reject'] as const) {
      const res = await svc.app.inject({
        method: 'POST',
        url: `/api/v1/approvals/${approval.id}/${verb}`,
        headers: approver.headers,
        payload: verb === 'approve' ? {} : { reason: 'late' },
      });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ error: 'approval has expired', error_detail: { error_code: 4000 } });
    }
    expect(await storedStatus(approval.id)).toBe('expired');
  });

  it('can still be decided a moment before expires_at', async () => {
    const approval = await create(60);
    advance(59.999);
    expect(await approver.caller.approvals.approve({ approval_id: approval.id, comment: null })).toMatchObject({ status: 'approved', seconds_remaining: 0 });
  });
});

describe('status filters evaluate expiry in the query', () => {
  it('status=expired includes overdue pending rows, status=pending excludes them', async () => {
    const action = `expiry:${Date.now()}`;
    const mk = (ttl: number | null) => {
      advance(0.001); // distinct creation times, so newest-first order is known
      return writer.caller.approvals.create({ ...BODY, action_type: action, ttl_seconds: ttl });
    };
    const soon = await mk(60);
    const later = await mk(3600);
    const never = await mk(null);
    advance(120);
    // Nothing has written the expiry yet: only the query can know.
    expect(await storedStatus(soon.id)).toBe('pending');
    const q = `action_type=${encodeURIComponent(action)}`;
    const pending = (await httpGet(`/approvals?${q}&status=pending&limit=1`)).json<Page>();
    expect(pending.data.map((a) => a.id)).toEqual([never.id]);
    expect(pending.pagination.has_more).toBe(true);
    const pendingAll = (await httpGet(`/approvals?${q}&status=pending`)).json<Page>();
    expect(pendingAll.data.map((a) => a.id)).toEqual([never.id, later.id]);
    const expired = (await httpGet(`/approvals?${q}&status=expired`)).json<Page>();
    expect(expired.data).toEqual([expect.objectContaining({ id: soon.id, status: 'expired', seconds_remaining: 0 })]);
    // ...and the list that met it wrote it down.
    expect(await storedStatus(soon.id)).toBe('expired');
  });

  it('an unfiltered list shows overdue rows as expired', async () => {
    const approval = await create(60);
    advance(61);
    const page = (await httpGet('/approvals?limit=200')).json<Page>();
    expect(page.data.find((a) => a.id === approval.id)).toMatchObject({ status: 'expired' });
  });
});

describe('a decided approval whose deadline passes', () => {
  // Expiry is a transition out of pending only: approved and rejected are final (CONTRACT §4.5).
  async function decidedPastDeadline() {
    const action = `decided:${Date.now()}-${Math.random()}`;
    const approved = await writer.caller.approvals.create({ ...BODY, action_type: action, ttl_seconds: 60 });
    const rejected = await writer.caller.approvals.create({ ...BODY, action_type: action, ttl_seconds: 60 });
    await approver.caller.approvals.approve({ approval_id: approved.id, comment: 'ok' });
    await approver.caller.approvals.reject({ approval_id: rejected.id, reason: 'no' });
    advance(61);
    return { action, approved, rejected };
  }

  it('still reads approved / rejected on GET, with its decider and the clock stopped at 0', async () => {
    const { approved, rejected } = await decidedPastDeadline();
    expect((await httpGet(`/approvals/${approved.id}`)).json().data).toMatchObject({
      status: 'approved',
      decided_by: approver.username,
      decision_reason: 'ok',
      seconds_remaining: 0,
    });
    expect((await httpGet(`/approvals/${rejected.id}`)).json().data).toMatchObject({ status: 'rejected', decided_by: approver.username, seconds_remaining: 0 });
    expect(await storedStatus(approved.id)).toBe('approved');
    expect(await storedStatus(rejected.id)).toBe('rejected');
  });

  it('is listed under its decision, never under expired or pending', async () => {
    const { action, approved, rejected } = await decidedPastDeadline();
    const q = `action_type=${encodeURIComponent(action)}`;
    const ids = async (filter: string) => (await httpGet(`/approvals?${q}${filter}`)).json<Page>().data.map((a) => [a.id, a.status]);
    expect(await ids('')).toEqual(expect.arrayContaining([[approved.id, 'approved'], [rejected.id, 'rejected']]));
    expect(await ids('&status=approved')).toEqual([[approved.id, 'approved']]);
    expect(await ids('&status=rejected')).toEqual([[rejected.id, 'rejected']]);
    expect(await ids('&status=expired')).toEqual([]);
    expect(await ids('&status=pending')).toEqual([]);
    expect(await storedStatus(approved.id)).toBe('approved');
    expect(await storedStatus(rejected.id)).toBe('rejected');
  });

  it('is left alone by the sweep and by the write-down of the reads that meet it', async () => {
    const { approved, rejected } = await decidedPastDeadline();
    // A read may find a row pending and write it down after a decision committed in between.
    expect(await expireOverdueApprovals(svc.deps.orm.em.fork(), svc.deps.clock.now(), [approved.id, rejected.id])).toBe(0);
    await expireOverdueApprovals(svc.deps.orm.em.fork(), svc.deps.clock.now());
    expect(await storedStatus(approved.id)).toBe('approved');
    expect(await storedStatus(rejected.id)).toBe('rejected');
  });

  it('keeps its ETag when the deadline passes', async () => {
    const approval = await create(60);
    await approver.caller.approvals.approve({ approval_id: approval.id, comment: null });
    const before = await httpGet(`/approvals/${approval.id}`);
    advance(61);
    const after = await httpGet(`/approvals/${approval.id}`);
    expect(after.json().data).toMatchObject({ status: 'approved' });
    expect(after.headers.etag).toBe(before.headers.etag);
  });
});

describe('the expiry sweep', () => {
  it('expireOverdueApprovals writes every overdue pending approval, and nothing else', async () => {
    const overdue = await create(60);
    const alive = await create(3600);
    const decided = await create(60);
    await approver.caller.approvals.reject({ approval_id: decided.id, reason: 'no' });
    advance(61);
    expect(await expireOverdueApprovals(svc.deps.orm.em.fork(), svc.deps.clock.now())).toBeGreaterThanOrEqual(1);
    expect(await storedStatus(overdue.id)).toBe('expired');
    expect(await storedStatus(alive.id)).toBe('pending');
    expect(await storedStatus(decided.id)).toBe('rejected');
    expect(await expireOverdueApprovals(svc.deps.orm.em.fork(), svc.deps.clock.now())).toBe(0);
  });

  it('runs on the job queue at the earliest pending deadline: the approval is written expired with its event within about a second, unread', async () => {
    // A clock of its own, moved so that an approval's deadline comes 2 s from now.
    const own: Clock & { offsetMs: number } = { offsetMs: 0, now: () => new Date(Date.now() + own.offsetMs) };
    const creator = await startTestService({ clock: own, env: { RATE_LIMITS_ENABLED: 'false' }, jobTypes: [] });
    const ownWriter = await createUser(creator, { role: 'pair_programmer' });
    const approval = await ownWriter.caller.approvals.create({ ...BODY, ttl_seconds: 60 });
    await creator.close();
    own.offsetMs += 58_000;
    const deadline = performance.now() + (Date.parse(approval.expires_at ?? '') - own.now().getTime());
    // The sweep of this instance runs at boot, finds the deadline ahead and sleeps until it.
    const worker = await startTestService({ clock: own, databaseUrl: creator.databaseUrl, jobTypes: [approvalExpiryJob()] });
    try {
      const stored = async () => (await kysely(worker.deps.orm.em.fork()).selectFrom('approvals').select('status').where('id', '=', approval.id).executeTakeFirst())?.status;
      await until(async () => (await stored()) === 'expired', 10_000, 'the sweep');
      const late = performance.now() - deadline;
      expect(late).toBeGreaterThanOrEqual(0);
      expect(late).toBeLessThan(1500);
      const events = await kysely(worker.deps.orm.em.fork()).selectFrom('events').select('data').where('type', '=', 'approval.expired').execute();
      expect(events.filter((e) => e.data.id === approval.id)).toHaveLength(1);
    } finally {
      await worker.close();
    }
  });
});

describe('ETag of an expiring approval', () => {
  function callerWithSink() {
    const sink = recordingSink();
    const caller = createCaller(createContextInner({ deps: svc.deps, credentials: { bearerToken: approver.token }, response: sink }));
    return { caller, sink };
  }

  it('stays the same while only the countdown moves, so If-Match still works seconds later', async () => {
    const approval = await create(3600);
    const first = callerWithSink();
    await first.caller.approvals.get({ approval_id: approval.id });
    const etag = first.sink.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    advance(30);
    const second = callerWithSink();
    const later = await second.caller.approvals.get({ approval_id: approval.id });
    expect(later.seconds_remaining).toBe(3570);
    expect(second.sink.headers.get('etag')).toBe(etag);
    const decider = createCaller(createContextInner({ deps: svc.deps, credentials: { bearerToken: approver.token, ifMatch: etag } }));
    expect(await decider.approvals.approve({ approval_id: approval.id, comment: null })).toMatchObject({ status: 'approved' });
  });

  it('changes when the approval expires', async () => {
    const approval = await create(60);
    const before = callerWithSink();
    await before.caller.approvals.get({ approval_id: approval.id });
    advance(61);
    const after = callerWithSink();
    await after.caller.approvals.get({ approval_id: approval.id });
    expect(after.sink.headers.get('etag')).not.toBe(before.sink.headers.get('etag'));
  });
});
