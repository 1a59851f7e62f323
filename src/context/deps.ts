// The long-lived dependencies every request shares: configuration, database, clock, logger, services' state.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { ProviderCatalogue } from '../data/providerCatalogue.ts';
import type { EventsRuntime } from '../events/runtime.ts';
import type { RequestLimiter } from '../limits/limiter.ts';

/** Time source; injected so expiry, windows and sessions are testable without sleeping. */
export type Clock = { now(): Date };
export const systemClock: Clock = { now: () => new Date() };

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
  /** Live events of this instance (CONTRACT §4.8): fan-out, stream admission, retention. */
  events: EventsRuntime;
};
