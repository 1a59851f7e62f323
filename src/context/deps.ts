// The long-lived dependencies every request shares: configuration, database, clock, logger, services' state.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Clock } from '../contracts/clock.ts';
import type { DashboardAssets } from '../dashboard/assets.ts';
import type { LiveEvents } from '../events/runtime.ts';
import type { JobSender } from '../jobs/jobType.ts';
import type { RequestLimiter } from '../limits/limiter.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { ApprovalWaits } from '../services/approvals/waiting.ts';
import type { SetupLatch } from '../services/auth/auth.ts';
import type { LoginThrottle } from '../services/auth/loginThrottle.ts';
import type { ProviderCatalogue } from '../contracts/catalogue.ts';


export type Deps = {
  config: Config;
  orm: MikroORM;
  clock: Clock;
  logger: FastifyBaseLogger;
  /** HMAC key for cursors and other server-signed values (CONTRACT §6 APP_SECRET). */
  secret: Buffer;
  startedAt: number;
  /** The model provider catalogue (PROVIDERS_FILE or the shipped default), validated at boot. */
  providers: ProviderCatalogue;
  /** CONTRACT §5 rate limits; null when RATE_LIMITS_ENABLED=false. */
  limiter: RequestLimiter | null;
  /** Failed-login counters (CONTRACT §3.4); on even when RATE_LIMITS_ENABLED=false. */
  loginThrottle: LoginThrottle;
  /** Whether first-run setup is known to be done, so setup and login stop asking the database. */
  setupLatch: SetupLatch;
  /** The built web dashboard (CONTRACT §4.9); null when DASHBOARD_ENABLED=false or nothing is built. */
  dashboard: DashboardAssets | null;
  /** Live events of this instance (CONTRACT §4.8): fan-out, stream admission, retention. */
  events: LiveEvents;
  /** Prometheus instruments (CONTRACT §4.10); updated whether or not GET /metrics is served. */
  metrics: Metrics;
  /** The job queue (CONTRACT §1 rev. 3, background work): where a service sends a job, in its transaction or not. */
  jobs: JobSender;
  /** Requests of this instance waiting for a decision (CONTRACT §4.11). */
  approvalWaits: ApprovalWaits;
};
