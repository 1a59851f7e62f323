// Writes overdue pending approvals as expired: on the reads that meet them and by a periodic sweep.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../context/deps.ts';
import { sqlRun } from '../../db/sql.ts';

export const SWEEP_INTERVAL_MS = 30_000;
// Bounded batches keep each sweep statement's row locks short next to concurrent decisions.
const SWEEP_BATCH = 1000;

/**
 * Marks overdue pending approvals expired: the given ones, or (without ids) every one in batches.
 * Idempotent and safe to run on several instances at once. Returns how many rows it changed.
 */
export async function expireOverdueApprovals(em: EntityManager, now: Date, ids?: readonly string[]): Promise<number> {
  if (ids !== undefined) {
    if (ids.length === 0) return 0;
    return sqlRun(
      em,
      `update approvals set status = 'expired'
        where id in (${ids.map(() => '?').join(', ')}) and status = 'pending' and expires_at <= ?`,
      [...ids, now],
    );
  }
  let total = 0;
  for (;;) {
    const changed = await sqlRun(
      em,
      `update approvals set status = 'expired'
        where id in (select id from approvals where status = 'pending' and expires_at <= ?
                      limit ${SWEEP_BATCH} for update skip locked)`,
      [now],
    );
    total += changed;
    if (changed < SWEEP_BATCH) return total;
  }
}

/** Runs the expiry sweep every `intervalMs` without keeping the process alive; returns the stop function. */
export function startApprovalExpirySweeper(deps: Deps, opts: { intervalMs?: number } = {}): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return; // a slow sweep is not stacked on by the next tick
    running = true;
    expireOverdueApprovals(deps.orm.em.fork(), deps.clock.now())
      .then((expired) => {
        if (expired > 0) deps.logger.info({ expired }, 'expired overdue approvals');
      })
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'approval expiry sweep failed'))
      .finally(() => {
        running = false;
      });
  }, opts.intervalMs ?? SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
