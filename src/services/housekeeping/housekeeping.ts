// Housekeeping (CONTRACT §4.10): periodic purges of rows past retention, one instance at a time, off the request path.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { BaseLogger } from 'pino';
import pg from 'pg';
import type { Config } from '../../config.ts';
import type { Metrics } from '../../metrics/registry.ts';
import { purgeEndedSessions, purgeRefreshTokens, purgeWsTickets } from '../auth/store.ts';
import { purgeExpiredKeys } from '../idempotency/store.ts';
import type { Clock } from '../../contracts/clock.ts';

/**
 * One purge: deletes at most `limit` rows that are past retention at `now` and returns how many it
 * deleted; housekeeping calls it again until it returns fewer than `limit`.
 */
export type PurgeTask = {
  name: string;
  purge(env: { em: EntityManager; now: Date; config: Config }, limit: number): Promise<number>;
};

/**
 * The purges every run performs, in order. Another area with rows to expire adds its task here (the events
 * outbox: rows older than EVENT_RETENTION_S, from `config`).
 */
export const PURGE_TASKS: readonly PurgeTask[] = [
  { name: 'sessions', purge: ({ em, now }, limit) => purgeEndedSessions(em, now, limit) },
  // After sessions, so the tokens of sessions purged in this run go too.
  { name: 'refresh_tokens', purge: ({ em, now }, limit) => purgeRefreshTokens(em, now, limit) },
  { name: 'ws_tickets', purge: ({ em, now }, limit) => purgeWsTickets(em, now, limit) },
  // One indexed statement (idempotency_keys_expires_at_idx) for all of them: at most a day's keys expire at once.
  { name: 'idempotency_keys', purge: ({ em, now }) => purgeExpiredKeys(em, now) },
];

// Rows per statement: each delete stays well inside STATEMENT_TIMEOUT_MS and holds few locks at once.
const BATCH = 5000;
// Any constant shared by every instance of this service (the migration lock uses another).
const HOUSEKEEPING_LOCK_KEY = '4703580514342707816';

export type HousekeepingDeps = {
  orm: MikroORM;
  /** The database URL: the lock lives on a connection of its own, outside the request pool. */
  url: string;
  clock: Clock;
  config: Config;
  logger: Pick<BaseLogger, 'info' | 'warn'>;
  metrics: Pick<Metrics, 'purgedRows'>;
};

export type RunResult = { ran: false } | { ran: true; purged: Record<string, number>; failed: string[] };

/**
 * One housekeeping run. Skipped (`ran: false`) when another instance holds the lock. A failing task is
 * logged and the others still run; nothing is thrown.
 */
export async function runHousekeeping(deps: HousekeepingDeps, tasks: readonly PurgeTask[] = PURGE_TASKS): Promise<RunResult> {
  const { logger } = deps;
  // A connection of its own holds the session-level lock while the purges run on the pool, one
  // short statement at a time, without a long transaction and without taking a pooled connection for the lock.
  const lock = new pg.Client({ connectionString: deps.url });
  try {
    await lock.connect();
    const { rows } = await lock.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [HOUSEKEEPING_LOCK_KEY]);
    if (rows[0]?.locked !== true) return { ran: false };
  } catch (error) {
    logger.warn({ err: error }, 'housekeeping could not take its lock; skipped');
    await lock.end().catch(() => {});
    return { ran: false };
  }
  try {
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
    return { ran: true, purged, failed };
  } finally {
    // Ending the connection releases the lock as well; unlocking first lets another instance in at once.
    await lock.query('SELECT pg_advisory_unlock($1::bigint)', [HOUSEKEEPING_LOCK_KEY]).catch(() => {});
    await lock.end().catch(() => {});
  }
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

export type Housekeeping = {
  /** Runs at once (still one instance at a time); the next timed run keeps its schedule. */
  runNow(): Promise<RunResult>;
  /** Stops the timer and waits for a run in progress, so the pool can be closed after it. */
  stop(): Promise<void>;
};

/** Runs housekeeping every PURGE_INTERVAL_S (or `intervalMs`) without keeping the process alive. */
export function startHousekeeping(deps: HousekeepingDeps, opts: { tasks?: readonly PurgeTask[]; intervalMs?: number } = {}): Housekeeping {
  let running: Promise<RunResult> | undefined;
  const run = () => {
    running ??= runHousekeeping(deps, opts.tasks).finally(() => (running = undefined));
    return running;
  };
  const timer = setInterval(() => {
    // runHousekeeping never rejects; a run still going when the next tick comes is not stacked on.
    void run();
  }, opts.intervalMs ?? deps.config.purgeIntervalS * 1000);
  timer.unref();
  return {
    runNow: run,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
