// The instance's job queue: pg-boss on the service's own PostgreSQL, its schema migrated at boot, a worker for every job type.
import { fromKysely, PgBoss, type Job, type JobResult, type SendOptions as BossSendOptions } from 'pg-boss';
import type { JobEnv, JobQueueName, JobSender, JobType, SendOptions } from './jobType.ts';
import { CHAIN_GUARD_CRON } from './periodic.ts';
import { bindJobSender, unbindJobSender } from './senders.ts';

/** pg-boss keeps its tables here, beside the service's own (which live in `public`). */
export const JOBS_SCHEMA = 'pgboss';

/**
 * Connections pg-boss's own pool may open: workers' fetches, sends outside a transaction, its maintenance.
 * Its statements are short; a send inside a transaction runs on that transaction's connection instead.
 */
const POOL_MAX = 4;

/** How long stop() lets running jobs finish; those still running then are failed, and retried by another instance. */
const STOP_TIMEOUT_MS = 10_000;

// Any job type may be registered; its payload type only matters to its own definition.
type AnyJobType = JobType<object>;

type QueueDeps = Omit<JobEnv, 'jobs'>;

/** Creates or migrates pg-boss's schema and nothing else (every boot does it first; the test template uses it alone). */
export async function migrateJobsSchema(databaseUrl: string): Promise<void> {
  const boss = new PgBoss({ connectionString: databaseUrl, schema: JOBS_SCHEMA, max: 1, supervise: false, schedule: false, registerInstance: false });
  await boss.start();
  await boss.stop({ graceful: false });
}

export class JobQueue implements JobSender {
  private readonly boss: PgBoss;
  private readonly deps: QueueDeps;

  private constructor(boss: PgBoss, deps: QueueDeps) {
    this.boss = boss;
    this.deps = deps;
  }

  /**
   * Connects, creates or migrates pg-boss's schema (several instances booting at once are fine: pg-boss
   * installs under an advisory lock and takes a lost race for done), creates each type's queue, starts a
   * worker for each on this instance, and keeps the periodic ones scheduled. The queues of `sentTo` are
   * created too, without a worker here: jobs may be sent to them (a webhook delivery queued with its event)
   * whichever types this instance works. The queue becomes the ORM's sender (senders.ts) until stop().
   */
  static async start(databaseUrl: string, deps: QueueDeps, types: readonly AnyJobType[], sentTo: readonly AnyJobType[] = []): Promise<JobQueue> {
    const names = new Set<string>();
    for (const type of types) {
      if (names.has(type.name)) throw new Error(`two job types are named ${type.name}`);
      names.add(type.name);
    }
    const boss = new PgBoss({
      connectionString: databaseUrl,
      schema: JOBS_SCHEMA,
      max: POOL_MAX,
      application_name: 'agent-org-jobs',
      // One more connection, held for LISTEN, only when a job type asks to be woken at once.
      useListenNotify: types.some((t) => t.queue?.wakeOnSend === true),
    });
    const log = deps.logger;
    // pg-boss reports what goes wrong in its own loops (a poll while the database is away) as events, not throws.
    boss.on('error', (error) => log.error({ err: error }, 'job queue error'));
    boss.on('warning', (warning) => log.warn({ warning: warning.data }, `job queue: ${warning.message}`));
    await boss.start();
    const queue = new JobQueue(boss, deps);
    // Before the first worker starts: a job's own events may queue deliveries.
    bindJobSender(deps.orm, queue);
    try {
      for (const type of types) await queue.register(type);
      for (const type of sentTo) if (!names.has(type.name)) await queue.createQueue(type);
    } catch (error) {
      unbindJobSender(deps.orm, queue);
      await boss.stop({ graceful: false }).catch(() => {});
      throw error;
    }
    return queue;
  }

  async send<P extends object>(type: JobQueueName<P>, payload: P, options: SendOptions = {}): Promise<string | null> {
    const data = type.payload.parse(payload);
    const sendOptions: BossSendOptions = {};
    if (options.startAfter !== undefined) sendOptions.startAfter = options.startAfter;
    if (options.singletonKey !== undefined) sendOptions.singletonKey = options.singletonKey;
    // Raw SQL on the transaction's own connection, so the job commits (or not) with it.
    if (options.em) sendOptions.db = fromKysely(options.em.getKysely());
    return this.boss.send(type.name, data, sendOptions);
  }

  /** One job of a fetched batch: its outcome for pg-boss. */
  private async runOne(type: AnyJobType, env: JobEnv, job: Job<unknown>): Promise<JobResult> {
    const payload = type.payload.safeParse(job.data);
    if (!payload.success) {
      // Stored by an older release with another schema: no retry can change that.
      this.deps.logger.error({ job: type.name, job_id: job.id, err: payload.error }, 'job payload does not match its schema; failed without retry');
      return { id: job.id, status: 'deadletter', output: { error: 'payload does not match its schema' } };
    }
    try {
      await type.run(payload.data, env, { id: job.id, retryCount: job.retryCount, signal: job.signal });
      return { id: job.id, status: 'completed' };
    } catch (error) {
      this.deps.logger.warn({ err: error, job: type.name, job_id: job.id, attempt: job.retryCount }, 'job failed');
      return { id: job.id, status: 'failed', output: { error: error instanceof Error ? error.message : String(error) } };
    }
  }

  /** Stops fetching, lets running jobs finish (bounded), and closes pg-boss's connections. */
  async stop(): Promise<void> {
    // Requests still draining may record events meanwhile, and queue their deliveries through this queue.
    await this.boss.stop({ graceful: true, timeout: STOP_TIMEOUT_MS, close: true });
    unbindJobSender(this.deps.orm, this);
  }

  /** pg-boss's options for a type's queue, from its settings. */
  private static queueOptions(type: AnyJobType) {
    const settings = type.queue ?? {};
    return {
      retryLimit: settings.retryLimit ?? 2,
      retryDelay: settings.retryDelayS ?? 0,
      retryBackoff: settings.retryBackoff ?? false,
      expireInSeconds: settings.expireInSeconds ?? 900,
      notify: settings.wakeOnSend ?? false,
      ...(settings.retryDelayMaxS === undefined ? {} : { retryDelayMax: settings.retryDelayMaxS }),
    };
  }

  /** Creates the type's queue if it does not exist yet (one that exists is left as it is). */
  private async createQueue(type: AnyJobType): Promise<void> {
    await this.boss.createQueue(type.name, { policy: type.queue?.policy ?? 'standard', ...JobQueue.queueOptions(type) });
  }

  private async register(type: AnyJobType): Promise<void> {
    const settings = type.queue ?? {};
    const options = JobQueue.queueOptions(type);
    // Created once, then brought up to this release's settings; only the policy cannot change.
    await this.createQueue(type);
    await this.boss.updateQueue(type.name, options);
    const env: JobEnv = { ...this.deps, jobs: this };
    const batchSize = settings.batchSize ?? 1;
    const work = {
      batchSize,
      // Each job of a batch is settled on its own: one that fails is retried without failing the others.
      perJobResults: true,
      // While fetches come back full there is more: the next one at once, not after the polling interval.
      burstWhenBatchFull: batchSize > 1,
      localConcurrency: settings.concurrency ?? 1,
      pollingIntervalSeconds: settings.pollIntervalS ?? 2,
      // With wakeOnSend pg-boss stretches its polling to 30 s, trusting the notifications; but a job sent with
      // `startAfter` is never notified when it comes due, so the polling interval stays the one asked for.
      notifyPollingIntervalSeconds: settings.pollIntervalS ?? 2,
    } as const;
    await this.boss.work<unknown>(type.name, work, (jobs) => Promise.all(jobs.map((job) => this.runOne(type, env, job))));
    if (type.periodic === true) {
      await this.boss.schedule(type.name, CHAIN_GUARD_CRON, {});
      // The first run on a new database, at once; dropped when a run is already queued.
      await this.boss.send(type.name, {});
    }
  }
}
