// Builds the real service on a fresh test database, plus shortcuts for caller and HTTP tests.
import pg from 'pg';
import type { DestinationStream } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createContextInner, recordingSink } from '../../src/context/index.ts';
import type { EventsTimings } from '../../src/events/runtime.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { createCaller } from '../../src/routers/index.ts';
import { createService, type Service, type ServiceOptions } from '../../src/service.ts';
import { createTestDatabase } from './database.ts';
import type { Credentials } from '../../src/contracts/actor.ts';
import type { Clock } from '../../src/contracts/clock.ts';

export type TestService = Service & {
  databaseUrl: string;
  caller(credentials?: Credentials, opts?: { ip?: string }): ReturnType<typeof createCaller>;
};

const silent = { debug: () => {}, info: () => {}, warn: () => {} };

export async function startTestService(
  opts: {
    env?: Record<string, string>;
    clock?: Clock;
    databaseUrl?: string;
    eventTimings?: Partial<EventsTimings>;
    /** The job types the service works (default: all of them); `[]` for none in the background. */
    jobTypes?: ServiceOptions['jobTypes'];
    /** Where the service's log lines go (at LOG_LEVEL, silent unless `env` sets it), e.g. a recorder. */
    logDestination?: DestinationStream;
  } = {},
): Promise<TestService> {
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase());
  // Test files share two cores: a race test's burst of 100 transactions may wait longer than production's
  // budgets (2 s for a connection, 5 s per statement) without anything being wrong. db.overload tests
  // those budgets with values of its own.
  const budgets = { DB_ACQUIRE_TIMEOUT_MS: '15000', STATEMENT_TIMEOUT_MS: '30000' };
  const config = loadConfig({ LOG_LEVEL: 'silent', ...budgets, ...opts.env, DATABASE_URL: databaseUrl, PUBLIC_URL: 'http://agent-org.test' });
  const database = await openDatabase(config, silent);
  const service = await createService(config, createLogger(config.logLevel, opts.logDestination), {
    database,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.eventTimings ? { eventTimings: opts.eventTimings } : {}),
    ...(opts.jobTypes ? { jobTypes: opts.jobTypes } : {}),
  });
  return {
    ...service,
    databaseUrl,
    caller: (credentials, callerOpts) =>
      createCaller(createContextInner({ deps: service.deps, credentials, response: recordingSink(), ip: callerOpts?.ip ?? '127.0.0.1' })),
    async close() {
      await service.close();
      await closeBounded(database, databaseUrl);
    },
  };
}

/**
 * Closes the database, which waits for every checked-out connection. A connection that was being opened
 * when the ORM closed used to be lost (Kysely's destroy race; database.close now waits for an idle pool,
 * tested by db.close). Should anything still hold one, say what the database was doing, cut our
 * connections and go on, instead of hanging the file until its hook timeout.
 */
async function closeBounded(database: { close(): Promise<void> }, databaseUrl: string): Promise<void> {
  const closing = database.close();
  const late = await Promise.race([closing.then(() => false), new Promise<boolean>((resolve) => setTimeout(resolve, 10_000, true).unref())]);
  if (!late) return;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query(
      'SELECT pid, state, wait_event_type, wait_event, xact_start, left(query, 300) AS query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    console.warn(`closing the pool waited 10 s for connections still in use: ${JSON.stringify(rows)}`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  } finally {
    await admin.end();
  }
  // A holder blocked in a query now fails and returns its connection; one waiting on something else would not.
  await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
}

/** A clock at real time plus whole seconds added by `tick()`, so "updated_at changed" never depends on two calls landing in different milliseconds. */
export function steppingClock(): { clock: Clock; tick: () => void } {
  let offsetMs = 0;
  return { clock: { now: () => new Date(Date.now() + offsetMs) }, tick: () => void (offsetMs += 1000) };
}
