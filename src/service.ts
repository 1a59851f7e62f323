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
import { startApprovalExpirySweeper } from './services/approvals/expiry.ts';
import { createSetupLatch } from './services/auth/auth.ts';
import { createLoginThrottle } from './services/auth/loginThrottle.ts';
import { EventsRuntime, type EventsTimings } from './events/runtime.ts';
import { startHousekeeping, type Housekeeping } from './services/housekeeping/housekeeping.ts';
import { systemClock, type Clock } from './contracts/clock.ts';

export type Service = { app: FastifyInstance; db: Database; deps: Deps; housekeeping: Housekeeping; close(): Promise<void> };

export async function createService(config: Config, logger: Logger, opts: { clock?: Clock; database?: Database; eventTimings?: Partial<EventsTimings> } = {}): Promise<Service> {
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
    const events = await EventsRuntime.start({ config, orm: db.orm, clock, logger, metrics }, db.url, opts.eventTimings);
    try {
      const deps: Deps = { config, orm: db.orm, clock, logger, secret, startedAt, providers, limiter, loginThrottle, setupLatch, dashboard, events, metrics };
      const app = await buildApp(deps);
      const stopSweeper = startApprovalExpirySweeper(deps);
      const housekeeping = startHousekeeping({ orm: db.orm, url: db.url, clock, config, logger, metrics });
      return {
        app,
        db,
        deps,
        housekeeping,
        async close() {
          stopSweeper();
          await housekeeping.stop();
          // Streams end first (inside app.close's preClose); the listener and jobs stop once requests are done.
          await app.close();
          await events.stop();
          if (!opts.database) await db.close();
        },
      };
    } catch (error) {
      await events.stop();
      throw error;
    }
  } catch (error) {
    if (!opts.database) await db.close();
    throw error;
  }
}
