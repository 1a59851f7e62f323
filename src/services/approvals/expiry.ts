// Writes overdue pending approvals as expired: on the reads that meet them and by a periodic sweep.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { BaseLogger } from 'pino';
import { recordEvent } from '../../events/record.ts';
import { toApprovalResponse } from './response.ts';
import { expireIfOverdue, expireOverdueBatch, type StoredApproval } from './store.ts';
import type { Clock } from '../../contracts/clock.ts';

export const SWEEP_INTERVAL_MS = 30_000;
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
    await recordEvent(tx, { type: 'approval.expired', actor: null, at: now, data: toApprovalResponse(approval, now) });
  }
  return expired.length;
}

/** Runs the expiry sweep every `intervalMs` without keeping the process alive; returns the stop function. */
export function startApprovalExpirySweeper(
  { orm, clock, logger }: { orm: MikroORM; clock: Clock; logger: Pick<BaseLogger, 'info' | 'warn'> },
  opts: { intervalMs?: number } = {},
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return; // a slow sweep is not stacked on by the next tick
    running = true;
    expireOverdueApprovals(orm.em.fork(), clock.now())
      .then((expired) => {
        if (expired > 0) logger.info({ expired }, 'expired overdue approvals');
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'approval expiry sweep failed'))
      .finally(() => {
        running = false;
      });
  }, opts.intervalMs ?? SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
