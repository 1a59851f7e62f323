// Periodic work on the queue: one run at a time on any instance, each run scheduling the next (pg-boss `stately` + `startAfter`).
import { z } from 'zod';
import { defineJob, type JobEnv, type JobType, type QueueSettings, type RunningJob } from './jobType.ts';

export type PeriodicJobDefinition = {
  name: string;
  run(env: JobEnv, job: RunningJob): Promise<void>;
  /** Seconds from the end of a successful run to the next one; asked after every run, so it may follow the data. */
  nextRunInS(env: JobEnv): number | Promise<number>;
  /** A run still going after this many seconds counts as dead and is retried (default 300). */
  expireInSeconds?: number;
  /** How often each instance looks for a due run, in seconds (default 2): how late a run may start. */
  pollIntervalS?: number;
};

/** Why a periodic job's payload is empty: everything a run needs comes from the environment. */
const NoPayload = z.strictObject({});

/**
 * A job type that keeps itself running. pg-boss's cron has minute granularity and cannot follow the data
 * (the next approval deadline), so each run ends by sending its successor with `startAfter`; the queue's
 * `stately` policy admits at most one queued run (and one running) across every instance, so a successor
 * sent while another run is queued is dropped and the chain never forks. The JobQueue also sends a run at
 * boot and registers a once-a-minute pg-boss schedule for the type; both are dropped while a run is queued,
 * and restart the chain within a minute if it ever broke (a run that failed all its retries).
 * A failed run (it threw) is retried by pg-boss with backoff; its successor is sent by the attempt that succeeds.
 */
export function definePeriodicJob(definition: PeriodicJobDefinition): JobType<Record<string, never>> {
  const settings: QueueSettings = {
    policy: 'stately',
    retryLimit: 5,
    retryDelayS: 5,
    retryBackoff: true,
    retryDelayMaxS: 60,
    expireInSeconds: definition.expireInSeconds ?? 300,
    pollIntervalS: definition.pollIntervalS ?? 2,
  };
  const type: JobType<Record<string, never>> = defineJob({
    name: definition.name,
    payload: NoPayload,
    queue: settings,
    periodic: true,
    async run(_payload, env, job) {
      await definition.run(env, job);
      const delayS = await definition.nextRunInS(env);
      await env.jobs.send(type, {}, { startAfter: Math.max(0, delayS) });
    },
  });
  return type;
}

/** The once-a-minute pg-boss schedule that restarts a periodic job's chain should it ever break. */
export const CHAIN_GUARD_CRON = '* * * * *';
