// Housekeeping (CONTRACT §4.10): periodic purges of rows past retention, a job on the queue (one run at a time), off the request path.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { BaseLogger } from 'pino';
import type { Config } from '../../config.ts';
import type { Metrics } from '../../metrics/registry.ts';
import { purgeEventsBefore, removeStaleStreams } from '../../events/store.ts';
import { definePeriodicJob } from '../../jobs/periodic.ts';
import { purgeEndedWaits } from '../approvals/store.ts';
import { purgeExpiredAuditEntries } from '../audit/audit.ts';
import { purgeEndedSessions, purgeRefreshTokens, purgeWsTickets } from '../auth/store.ts';
import { purgeExpiredKeys } from '../idempotency/store.ts';
import { purgeDeliveriesBefore } from '../webhooks/store.ts';
import type { Clock } from '../../contracts/clock.ts';

/**
 * One purge: deletes at most `limit` rows that are past retention at `now` and returns how many it
 * deleted; housekeeping calls it again until it returns fewer than `limit`.
 */
export type PurgeTask = {
  name: string;
  purge(env: { em: EntityManager; now: Date; config: Config }, limit: number): Promise<number>;
};

/** How long a webhook delivery is listed (CONTRACT §4.12). */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600 * 1000;

/**
 * How long a row of the open-streams registry may go unmarked before housekeeping deletes it. Live instances
 * mark theirs every few seconds and stop counting a row long before this (events/runtime.ts); what is left this
 * long belongs to an instance that died without removing its rows.
 */
export const DEAD_STREAM_ROW_MS = 3600 * 1000;

/** The purges every run performs, in order. Another area with rows to expire adds its task here. */
export const PURGE_TASKS: readonly PurgeTask[] = [
  { name: 'sessions', purge: ({ em, now }, limit) => purgeEndedSessions(em, now, limit) },
  // After sessions, so the tokens of sessions purged in this run go too.
  { name: 'refresh_tokens', purge: ({ em, now }, limit) => purgeRefreshTokens(em, now, limit) },
  { name: 'ws_tickets', purge: ({ em, now }, limit) => purgeWsTickets(em, now, limit) },
  // One indexed statement (idempotency_keys_expires_at_idx) for all of them: at most a day's keys expire at once.
  { name: 'idempotency_keys', purge: ({ em, now }) => purgeExpiredKeys(em, now) },
  // Rows of approval waits whose instance died before releasing them; a few at most.
  { name: 'approval_waits', purge: ({ em, now }) => purgeEndedWaits(em, now) },
  // Entries older than AUDIT_RETENTION_DAYS: the only way an audit entry ever goes (CONTRACT §4.13).
  { name: 'audit_entries', purge: ({ em, now, config }, limit) => purgeExpiredAuditEntries(em, now, config.auditRetentionDays, limit) },
  // Webhook deliveries are kept 30 days (CONTRACT §4.12), whatever their status.
  { name: 'webhook_deliveries', purge: ({ em, now }, limit) => purgeDeliveriesBefore(em, new Date(now.getTime() - DELIVERY_RETENTION_MS), limit) },
  // One transaction deleting the oldest events as a prefix in id order, never one a webhook delivery has yet
  // to read (events/store.ts): replay after the retention mark stays complete (CONTRACT §4.8).
  { name: 'events', purge: ({ em, now, config }) => purgeEventsBefore(em, new Date(now.getTime() - config.eventRetentionS * 1000)) },
  { name: 'event_streams', purge: ({ em, now }) => removeStaleStreams(em, new Date(now.getTime() - DEAD_STREAM_ROW_MS)) },
];

// Rows per statement: each delete stays well inside STATEMENT_TIMEOUT_MS and holds few locks at once.
const BATCH = 5000;

export type HousekeepingDeps = {
  orm: MikroORM;
  clock: Clock;
  config: Config;
  logger: Pick<BaseLogger, 'info' | 'warn'>;
  metrics: Pick<Metrics, 'purgedRows'>;
};

export type RunResult = { purged: Record<string, number>; failed: string[] };

/**
 * One housekeeping run: every task in order. A failing task is logged and the others still run; nothing is
 * thrown. That only one instance runs it at a time is the queue's doing (housekeepingJob below).
 */
export async function runHousekeeping(deps: HousekeepingDeps, tasks: readonly PurgeTask[] = PURGE_TASKS): Promise<RunResult> {
  const { logger } = deps;
  const now = deps.clock.now();
  const purged: Record<string, number> = {};
  const failed: string[] = [];
  for (const task of tasks) {
    try {
      purged[task.name] = await purgeAll(deps, task, now);
    } catch (error) {
      failed.push(task.name);
      logger.warn({ err: error, task: task.name }, 'housekeeping purge failed');
    }
  }
  const total = Object.values(purged).reduce((a, b) => a + b, 0);
  if (total > 0) logger.info({ purged }, 'housekeeping purged expired rows');
  return { purged, failed };
}

async function purgeAll(deps: HousekeepingDeps, task: PurgeTask, now: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await task.purge({ em: deps.orm.em.fork(), now, config: deps.config }, BATCH);
    total += deleted;
    if (deleted > 0) deps.metrics.purgedRows.inc({ task: task.name }, deleted);
    if (deleted < BATCH) return total;
  }
}

/**
 * Housekeeping on the job queue: every PURGE_INTERVAL_S after the previous run ended, on whichever instance
 * takes it, never two runs at once (CONTRACT §1 rev. 3, background work).
 */
export const housekeepingJob = definePeriodicJob({
  name: 'housekeeping.purge',
  run: async (env) => {
    await runHousekeeping(env);
  },
  nextRunInS: (env) => env.config.purgeIntervalS,
  // Each purge is bounded batches; a run this long has lost its worker.
  expireInSeconds: 900,
});
