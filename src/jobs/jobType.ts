// What a job type is — a name, the schema of its payload, how its queue behaves, the function that runs it — and what a run gets.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { BaseLogger } from 'pino';
import type { z } from 'zod';
import type { Config } from '../config.ts';
import type { Clock } from '../contracts/clock.ts';
import type { Metrics } from '../metrics/registry.ts';

/** What every run gets: the service's long-lived dependencies, and the queue itself to send follow-up jobs. */
export type JobEnv = {
  orm: MikroORM;
  clock: Clock;
  config: Config;
  logger: Pick<BaseLogger, 'info' | 'warn' | 'error'>;
  metrics: Metrics;
  jobs: JobSender;
};

/** The job being run: its id, which attempt this is (0 the first), and a signal that aborts when the queue gives up on it. */
export type RunningJob = { id: string; retryCount: number; signal: AbortSignal };

export type SendOptions = {
  /**
   * Send inside this transaction: the job exists if and only if the transaction commits (as an event and its
   * outbox row). Without it the job is sent at once on the queue's own connection.
   */
  em?: EntityManager;
  /** Seconds from now (fractions allowed), or a time, before which the job does not run. */
  startAfter?: number | Date;
  /** With a policy that limits jobs per key (`stately`, …): the key. */
  singletonKey?: string;
};

export interface JobSender {
  /**
   * Queues a job of `type` (its payload checked against the type's schema). Resolves to the job's id, or null
   * when the queue's policy refused it (a `stately` queue that already holds a queued job).
   */
  send<P extends object>(type: JobQueueName<P>, payload: P, options?: SendOptions): Promise<string | null>;
}

/** How a type's queue keeps, retries and works its jobs (pg-boss queue and worker options). */
export type QueueSettings = {
  /**
   * pg-boss queue policy: `standard` (the default: any number queued and running), `stately` (at most one
   * queued and one running at a time, on every instance together), `singleton`, `short`, `exclusive`.
   */
  policy?: 'standard' | 'short' | 'singleton' | 'stately' | 'exclusive';
  /** Further attempts after a failed run (default 2). A run fails when it throws. */
  retryLimit?: number;
  /** Seconds before a failed job is tried again (default 0)… */
  retryDelayS?: number;
  /** …doubling each time, with jitter, up to `retryDelayMaxS`. */
  retryBackoff?: boolean;
  retryDelayMaxS?: number;
  /** A run still going after this many seconds counts as failed (its worker died) and is retried (default 900). */
  expireInSeconds?: number;
  /** Workers of this type on each instance (default 1)… */
  concurrency?: number;
  /**
   * …each fetching up to this many due jobs at once and running them together (default 1). Raise both for
   * throughput: a worker whose fetch came back full fetches again at once instead of waiting to poll.
   */
  batchSize?: number;
  /** How often an idle instance looks for due jobs of this type, in seconds (default 2, at least 0.5). */
  pollIntervalS?: number;
  /** Wake the workers through LISTEN/NOTIFY the moment a job is sent, instead of at their next look. */
  wakeOnSend?: boolean;
};

/**
 * What sending needs of a job type: its queue and payload. A module that only sends jobs of a type whose runner
 * imports it back (webhook deliveries, queued by recordEvent, whose runner records audit entries) names these
 * alone and stays out of an import cycle.
 */
export type JobQueueName<P extends object> = Pick<JobType<P>, 'name' | 'payload'>;

export interface JobType<P extends object> {
  /** The queue's name (letters, digits, `.`, `_`, `-`), e.g. `webhooks.deliver`. Never rename one that has jobs queued. */
  readonly name: string;
  /** Checked when a job is sent and again when it runs (the payload is stored as JSON in between). */
  readonly payload: z.ZodType<P>;
  readonly queue?: QueueSettings;
  /** Set by definePeriodicJob (periodic.ts): the queue keeps one run scheduled at all times. */
  readonly periodic?: boolean;
  /** Runs one job. Throwing fails the attempt: it is retried per `queue`, on whichever instance takes it. */
  run(payload: P, env: JobEnv, job: RunningJob): Promise<void>;
}

/** A job type (the identity: it exists so a definition's payload type is inferred and checked in one place). */
export function defineJob<P extends object>(type: JobType<P>): JobType<P> {
  return type;
}
