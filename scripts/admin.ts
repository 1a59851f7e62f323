// `npm run admin -- <command>`: operator commands on the configured database (CONTRACT §4.10).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { AdminError, formatTable, listUsers, resetMfa, resetPassword, revokeApiKeys, revokeSessions } from '../src/admin/commands.ts';
import { ConfigError, loadConfig, type Config } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { runningEmbeddedPostgres } from '../src/db/embedded.ts';
import { JOB_TYPES } from '../src/jobs/catalogue.ts';
import { JobQueue } from '../src/jobs/queue.ts';
import { createMetrics } from '../src/metrics/registry.ts';
import { systemClock } from '../src/contracts/clock.ts';

const USAGE = 'usage: npm run admin -- reset-password <username> | list-users | revoke-sessions <username> | revoke-api-keys <username> | reset-mfa <username>';

const PER_USER = ['reset-password', 'revoke-sessions', 'revoke-api-keys', 'reset-mfa'] as const;
type PerUser = (typeof PER_USER)[number];

type Command = { name: PerUser; username: string } | { name: 'list-users' };

function isPerUser(name: string | undefined): name is PerUser {
  return (PER_USER as readonly (string | undefined)[]).includes(name);
}

/** Exit codes: 0 done, 1 failed (nothing changed), 2 the command line itself is wrong. */
class Failure extends Error {
  readonly exitCode: 1 | 2;
  constructor(message: string, exitCode: 1 | 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

function parseCommand(argv: readonly string[]): Command {
  const [name, ...rest] = argv;
  if (name === 'list-users' && rest.length === 0) return { name };
  if (isPerUser(name) && rest.length === 1 && rest[0]) return { name, username: rest[0] };
  if (name === 'list-users' || isPerUser(name)) throw new Failure(`wrong arguments for ${name} (${USAGE})`, 2);
  throw new Failure(name === undefined ? USAGE : `unknown command ${JSON.stringify(name)} (${USAGE})`, 2);
}

function configuration(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) throw new Failure(error.message.replace(/\n\s*/g, ' '), 1);
    throw error;
  }
}

async function open(config: Config): Promise<Database> {
  const cluster = path.join(config.dataDir, 'pg');
  // Starting the embedded PostgreSQL on an empty DATA_DIR would create a fresh, empty database.
  if (!config.databaseUrl && !existsSync(path.join(cluster, 'PG_VERSION'))) {
    throw new Failure(`no database: ${cluster} holds no embedded PostgreSQL (set DATA_DIR to the service's, or DATABASE_URL)`, 1);
  }
  const log = { debug: () => {}, info: (m: string) => console.error(m), warn: (m: string) => console.error(m) };
  try {
    // Beside a running service, its embedded PostgreSQL is reached where it listens (a cluster has one
    // postmaster, and the operator locked out of the dashboard must not have to stop the service); with
    // none running, the command starts it for itself as the service would, and stops it when done.
    const running = config.databaseUrl ? null : await runningEmbeddedPostgres(cluster);
    return await openDatabase(running === null ? config : { ...config, databaseUrl: running }, log);
  } catch (error) {
    throw new Failure(`cannot open the database: ${firstLine(error)}`, 1);
  }
}

async function run(command: Command, db: Database): Promise<void> {
  const env = { em: db.orm.em.fork(), clock: systemClock };
  switch (command.name) {
    case 'list-users':
      console.log(formatTable(await listUsers(env)));
      return;
    case 'reset-password': {
      const done = await resetPassword(env, command.username);
      console.log(`temporary password for ${done.username}: ${done.password}`);
      console.log(`shown once; ${done.username} must choose a new password at the next sign-in (${done.revokedSessions} session(s) revoked)`);
      return;
    }
    case 'revoke-sessions': {
      const done = await revokeSessions(env, command.username);
      console.log(`revoked ${done.revokedSessions} session(s) of ${done.username}`);
      return;
    }
    case 'revoke-api-keys': {
      const done = await revokeApiKeys(env, command.username);
      console.log(`revoked ${done.revokedKeys} API key(s) of ${done.username}`);
      return;
    }
    case 'reset-mfa': {
      const done = await resetMfa(env, command.username);
      console.log(`two-factor authentication of ${done.username} is off: they sign in with the password alone and may enroll again`);
      return;
    }
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message || error.name : String(error);
  return message.split('\n')[0] ?? message;
}

/**
 * The job queue, to send jobs only (no worker runs here): a command's events are delivered to the webhooks
 * they match, and those deliveries are queued in the command's transaction (CONTRACT §4.12); a running
 * instance works them.
 */
async function jobSender(db: Database, config: Config): Promise<JobQueue> {
  // pino's calling convention, `(details, message)` or `(message)`: the message goes to stderr, one line.
  const line = (...args: unknown[]) => console.error(`admin: job queue: ${String(args.findLast((a) => typeof a === 'string') ?? 'error')}`);
  const quiet = { info: () => {}, warn: line, error: line };
  return JobQueue.start(db.url, { orm: db.orm, clock: systemClock, config, logger: quiet, metrics: createMetrics() }, [], JOB_TYPES);
}

let exitCode = 0;
try {
  const command = parseCommand(process.argv.slice(2));
  const config = configuration();
  const db = await open(config);
  try {
    const jobs = await jobSender(db, config);
    try {
      await run(command, db);
    } finally {
      await jobs.stop();
    }
  } finally {
    await db.close();
  }
} catch (error) {
  exitCode = error instanceof Failure ? error.exitCode : 1;
  console.error(`admin: ${error instanceof Failure || error instanceof AdminError ? error.message : firstLine(error)}`);
}
process.exit(exitCode);
