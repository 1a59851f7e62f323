// Writes overdue pending approvals as expired: on the reads that meet them and by a sweep on the job queue, at each deadline.
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent } from '../../events/record.ts';
import { SYSTEM_ORIGIN } from '../audit/origin.ts';
import { definePeriodicJob } from '../../jobs/periodic.ts';
import type { JobType } from '../../jobs/jobType.ts';
import { toApprovalResponse } from './response.ts';
import { expireIfOverdue, expireOverdueBatch, nextDeadline, type StoredApproval } from './store.ts';

// Bounded batches keep each sweep statement's row locks short next to concurrent decisions.
const SWEEP_BATCH = 1000;

/**
 * Marks overdue pending approvals expired: the given ones, or (without ids) every one in batches.
 * Decided approvals are never touched. Idempotent and safe to run on several instances at once.
 * Returns how many rows it changed.
 */
export async function expireOverdueApprovals(em: EntityManager, now: Date, ids?: readonly string[]): Promise<number> {
  if (ids !== undefined) return em.transactional(async (tx) => recordExpired(tx, await expireIfOverdue(tx, ids, now), now));
  let total = 0;
  for (;;) {
    const changed = await em.transactional(async (tx) => recordExpired(tx, await expireOverdueBatch(tx, now, SWEEP_BATCH), now));
    total += changed;
    if (changed < SWEEP_BATCH) return total;
  }
}

/** One `approval.expired` event per approval written expired, in the transaction that wrote it. */
async function recordExpired(tx: EntityManager, expired: readonly StoredApproval[], now: Date): Promise<number> {
  for (const approval of expired) {
    // The system's change, whichever call noticed it (a read, a wait, the sweep): its audit entry names no request.
    await recordEvent(tx, { type: 'approval.expired', actor: null, at: now, data: toApprovalResponse(approval, now), origin: SYSTEM_ORIGIN });
  }
  return expired.length;
}

/**
 * The longest the sweep ever sleeps. Shorter than the shortest ttl_seconds (60), so a sweep runs between any
 * approval's creation and its deadline, and that sweep schedules the next one no later than the deadline.
 */
export const SWEEP_MAX_INTERVAL_S = 30;

/**
 * The expiry sweep on the job queue: it runs when the earliest pending deadline comes (or after
 * SWEEP_MAX_INTERVAL_S, whichever is first), writes every overdue approval expired with its `approval.expired`
 * event, and schedules its next run; one run at a time on whichever instance takes it. The events therefore
 * come within about `pollIntervalS` of each deadline, read or not. Reads that meet an overdue approval
 * still write it down themselves (a waiting client's deadline timer does so at once).
 */
export function approvalExpiryJob(opts: { maxIntervalS?: number; pollIntervalS?: number } = {}): JobType<Record<string, never>> {
  const maxIntervalS = opts.maxIntervalS ?? SWEEP_MAX_INTERVAL_S;
  return definePeriodicJob({
    name: 'approvals.expire',
    run: async ({ orm, clock, logger }) => {
      const expired = await expireOverdueApprovals(orm.em.fork(), clock.now());
      if (expired > 0) logger.info({ expired }, 'expired overdue approvals');
    },
    nextRunInS: async ({ orm, clock }) => {
      const deadline = await nextDeadline(orm.em.fork());
      if (deadline === null) return maxIntervalS;
      // A deadline already past (a row a concurrent decision held): soon, not in a loop.
      return Math.min(maxIntervalS, Math.max(0.5, (deadline.getTime() - clock.now().getTime()) / 1000));
    },
    // A sweep is bounded batches; one running this long has lost its worker, and the next must not wait long.
    expireInSeconds: 60,
    pollIntervalS: opts.pollIntervalS ?? 1,
  });
}
