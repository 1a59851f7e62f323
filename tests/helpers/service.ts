// Builds the real service on a fresh test database, plus shortcuts for caller and HTTP tests.
import { loadConfig } from '../../src/config.ts';
import { createContextInner, recordingSink, type Credentials } from '../../src/context/index.ts';
import type { Clock } from '../../src/context/deps.ts';
import type { EventsTimings } from '../../src/events/runtime.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { createCaller } from '../../src/routers/index.ts';
import { createService, type Service } from '../../src/service.ts';
import { createTestDatabase } from './database.ts';

export type TestService = Service & {
  databaseUrl: string;
  caller(credentials?: Credentials, opts?: { ip?: string }): ReturnType<typeof createCaller>;
};

const silent = { debug: () => {}, info: () => {}, warn: () => {} };

export async function startTestService(
  opts: { env?: Record<string, string>; clock?: Clock; databaseUrl?: string; eventTimings?: Partial<EventsTimings> } = {},
): Promise<TestService> {
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase());
  // Test files share two cores: a race test's burst of 100 transactions may wait longer than production's
  // budgets (2 s for a connection, 5 s per statement) without anything being wrong. db.overload tests
  // those budgets with values of its own.
  const budgets = { DB_ACQUIRE_TIMEOUT_MS: '15000', STATEMENT_TIMEOUT_MS: '30000' };
  const config = loadConfig({ LOG_LEVEL: 'silent', ...budgets, ...opts.env, DATABASE_URL: databaseUrl, PUBLIC_URL: 'http://agent-org.test' });
  const database = await openDatabase(config, silent);
  const service = await createService(config, createLogger(config.logLevel), { database, ...(opts.clock ? { clock: opts.clock } : {}), ...(opts.eventTimings ? { eventTimings: opts.eventTimings } : {}) });
  return {
    ...service,
    databaseUrl,
    caller: (credentials, callerOpts) =>
      createCaller(createContextInner({ deps: service.deps, credentials, response: recordingSink(), ip: callerOpts?.ip ?? '127.0.0.1' })),
    async close() {
      await service.close();
      await database.close();
    },
  };
}

/** A clock at real time plus whole seconds added by `tick()`, so "updated_at changed" never depends on two calls landing in different milliseconds. */
export function steppingClock(): { clock: Clock; tick: () => void } {
  let offsetMs = 0;
  return { clock: { now: () => new Date(Date.now() + offsetMs) }, tick: () => void (offsetMs += 1000) };
}
