// Starts the whole service from a config: database (embedded or external), secret, app; and stops it again.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { type Deps } from './context/deps.ts';
import { openDatabase, type Database } from './db/database.ts';
import { loadSecret } from './services/settings/store.ts';
import { loadProviderCatalogue } from './data/providerCatalogue.ts';
import { DASHBOARD_DIR, loadDashboard } from './dashboard/assets.ts';
import { nativePool } from './db/pool.ts';
import { RequestLimiter } from './limits/limiter.ts';
import { createMetrics } from './metrics/registry.ts';
import { parseRateLimitOverrides, resolvePolicy } from './limits/policy.ts';
import { createLimiterStores, type LimiterStoreConfig } from './limits/stores.ts';
import { createSetupLatch } from './services/auth/auth.ts';
import { createLoginThrottle } from './services/auth/loginThrottle.ts';
import { EventsRuntime, type EventsTimings } from './events/runtime.ts';
import { runHousekeeping, type RunResult } from './services/housekeeping/housekeeping.ts';
import { ApprovalWaits } from './services/approvals/waiting.ts';
import { JOB_TYPES } from './jobs/catalogue.ts';
import type { JobType } from './jobs/jobType.ts';
import { JobQueue } from './jobs/queue.ts';
import { countPendingDeliveries } from './services/webhooks/store.ts';
import { systemClock, type Clock } from './contracts/clock.ts';

export type Service = {
  app: FastifyInstance;
  db: Database;
  deps: Deps;
  /** Housekeeping, run at once in this process (the queue runs it every PURGE_INTERVAL_S on its own): for tests and operators. */
  housekeeping: { runNow(): Promise<RunResult> };
  /** This instance's job queue (pg-boss), a worker for every job type. */
  jobs: JobQueue;
  close(): Promise<void>;
};

export type ServiceOptions = {
  clock?: Clock;
  database?: Database;
  eventTimings?: Partial<EventsTimings>;
  /** The job types this instance works; default every one the service has (src/jobs/catalogue.ts). */
  jobTypes?: readonly JobType<object>[];
};

export async function createService(config: Config, logger: Logger, opts: ServiceOptions = {}): Promise<Service> {
  const startedAt = performance.now();
  // Validated before anything starts, so a broken PROVIDERS_FILE stops the boot with its own message.
  const providers = config.providersFile ? loadProviderCatalogue(config.providersFile) : loadProviderCatalogue();
  // Also validated when limits are off, so switching them back on cannot meet a broken RATE_LIMITS.
  const ratePolicy = resolvePolicy(parseRateLimitOverrides(config.rateLimitOverrides));
  const log = {
    debug: (m: string) => logger.debug(m),
    info: (m: string) => logger.info(m),
    warn: (m: string) => logger.warn(m),
  };
  const db = opts.database ?? (await openDatabase(config, log));
  try {
    const secret = await loadSecret(db.orm.em.fork(), config.appSecret);
    const clock = opts.clock ?? systemClock;
    // PostgreSQL shares every bucket between instances; memory suits one instance on the embedded database.
    const limiterStore: LimiterStoreConfig = config.rateLimitStore === 'postgres' ? { kind: 'postgres', pool: await nativePool(db.orm) } : { kind: 'memory' };
    const limiter = config.rateLimitsEnabled ? new RequestLimiter({ store: limiterStore, policy: ratePolicy, now: () => clock.now().getTime() }) : null;
    // Its own store factory: the throttle stays on when the request limits are off.
    const loginThrottle = createLoginThrottle(createLimiterStores(limiterStore));
    const setupLatch = createSetupLatch();
    const dashboard = config.dashboardEnabled ? await loadDashboard() : null;
    if (config.dashboardEnabled && !dashboard) logger.warn(`DASHBOARD_ENABLED but ${DASHBOARD_DIR} holds no build (npm run web:build); / is not served`);
    const metrics = createMetrics();
    metrics.watchWebhookQueue(() => countPendingDeliveries(db.orm.em.fork()));
    const events = await EventsRuntime.start({ config, orm: db.orm, clock, logger, metrics }, db.url, opts.eventTimings);
    // After the events runtime: a job's events are published by the instance that records them.
    // Every queue of the catalogue exists whichever types this instance works: events queue webhook deliveries.
    const jobDeps = { orm: db.orm, clock, config, logger: logger.child({ component: 'jobs' }), metrics };
    const jobs = await JobQueue.start(db.url, jobDeps, opts.jobTypes ?? JOB_TYPES, JOB_TYPES).catch(
      async (error: unknown) => {
        await events.stop();
        throw error;
      },
    );
    try {
      const approvalWaits = new ApprovalWaits(events.hub, logger.child({ component: 'approval-waits' }));
      const deps: Deps = { config, orm: db.orm, clock, logger, secret, startedAt, providers, limiter, loginThrottle, setupLatch, dashboard, events, metrics, jobs, approvalWaits };
      const app = await buildApp(deps);
      return {
        app,
        db,
        deps,
        housekeeping: { runNow: () => runHousekeeping({ orm: db.orm, clock, config, logger, metrics }) },
        jobs,
        async close() {
          // Streams end and waits are answered first (inside app.close's preClose); running jobs finish meanwhile.
          await Promise.all([app.close(), jobs.stop()]);
          await events.stop();
          if (!opts.database) await db.close();
        },
      };
    } catch (error) {
      await jobs.stop();
      await events.stop();
      throw error;
    }
  } catch (error) {
    if (!opts.database) await db.close();
    throw error;
  }
}
