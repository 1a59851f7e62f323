// GET /api/v1/users?limit=50 over 10,000 users: the first page versus a page ~9,000 rows deep (keyset pagination).
// Run by hand: node_modules/.bin/node bench/users-list.ts  (BENCH_DURATION, BENCH_CONNECTIONS override 10 s and 50).
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { loadConfig } from '../src/config.ts';
import { sqlRun } from '../src/db/sql.ts';
import { createLogger } from '../src/logger.ts';
import { createService } from '../src/service.ts';
import { insertUser } from '../src/services/auth/accounts.ts';
import { issueSession } from '../src/services/auth/sessions.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const NODE = path.join(root, 'node_modules', '.bin', 'node');
const AUTOCANNON = path.join(root, 'node_modules', 'autocannon', 'autocannon.js');
const USERS = 10_000;
const DEEP_ROWS = 9_000;
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

type LoadResult = { requestsPerSecond: number; p50: number; p99: number; non2xx: number; errors: number };

const AutocannonJson = z.object({
  requests: z.object({ average: z.number() }),
  latency: z.object({ p50: z.number(), p99: z.number() }),
  non2xx: z.number(),
  errors: z.number(),
});

const PageJson = z.object({
  data: z.array(z.object({ id: z.string() })),
  pagination: z.object({ next_cursor: z.string().nullable() }),
});

/** One autocannon run in its own process, so the load generator does not share the server's event loop. */
async function load(url: string, token: string, durationS: number): Promise<LoadResult> {
  const args = [AUTOCANNON, '-c', String(CONNECTIONS), '-d', String(durationS), '-H', `authorization=Bearer ${token}`, '--json', '-n', url];
  const child = spawn(NODE, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`autocannon exited with ${String(code)}`);
  const parsed = AutocannonJson.parse(JSON.parse(out));
  return { requestsPerSecond: parsed.requests.average, p50: parsed.latency.p50, p99: parsed.latency.p99, non2xx: parsed.non2xx, errors: parsed.errors };
}

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-bench-users-'));
// As root the embedded server runs as `postgres` and must reach its data dir.
await fs.chmod(dataDir, 0o755);
// Rate limits off: one user sending tens of thousands of requests a minute is the point here.
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', PORT: '0', RATE_LIMITS_ENABLED: 'false' });
const service = await createService(config, createLogger(config.logLevel));
try {
  const em = service.deps.orm.em.fork();
  const reader = await insertUser(em, service.deps, { username: 'bench_reader', password: 'bench reader password', role: 'observer', mustChangePassword: false });
  const session = await em.transactional((tx) => issueSession(tx, service.deps, reader.id, { ip: '127.0.0.1', userAgent: 'bench' }));
  // One statement; rows come in pairs sharing a timestamp, so the id tie-break is exercised too.
  await sqlRun(
    em,
    `insert into users (id, username, username_key, password_hash, role, must_change_password, created_at, updated_at)
     select gen_random_uuid(), 'bench_' || g, 'bench_' || g, 'not-a-hash', 'observer', false,
            timestamptz '2026-01-01T00:00:00Z' + (g / 2) * interval '1 millisecond',
            timestamptz '2026-01-01T00:00:00Z' + (g / 2) * interval '1 millisecond'
       from generate_series(1, ?) as g`,
    [USERS],
  );
  await sqlRun(em, 'analyze users');

  const base = await service.app.listen({ port: 0, host: '127.0.0.1' });
  const headers = { authorization: `Bearer ${session.accessToken}` };
  // The deep cursor is taken the way a client gets one: by walking pages of 200 through the API.
  let cursor: string | null = null;
  for (let seen = 0; seen < DEEP_ROWS; ) {
    const res = await fetch(`${base}/api/v1/users?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { headers });
    const page = PageJson.parse(await res.json());
    seen += page.data.length;
    cursor = page.pagination.next_cursor;
    if (cursor === null) throw new Error(`ran out of users after ${seen}`);
  }
  const first = `${base}/api/v1/users?limit=50`;
  const deep = `${base}/api/v1/users?limit=50&cursor=${cursor}`;
  const check = PageJson.parse(await (await fetch(deep, { headers })).json());
  if (check.data.length !== 50) throw new Error('the deep page is not full');

  await load(first, session.accessToken, 3);
  await load(deep, session.accessToken, 3);
  const firstResult = await load(first, session.accessToken, DURATION_S);
  const deepResult = await load(deep, session.accessToken, DURATION_S);

  const row = (name: string, r: LoadResult) =>
    `| ${name} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.non2xx} | ${r.errors} |`;
  console.log(`GET /api/v1/users?limit=50 over ${USERS} users, ${CONNECTIONS} connections, ${DURATION_S} s each (after a 3 s warm-up)`);
  console.log(`node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`);
  console.log('| page | req/s | p50 ms | p99 ms | non-2xx | errors |');
  console.log('|---|---|---|---|---|---|');
  console.log(row('first', firstResult));
  console.log(row(`deep (after ${DEEP_ROWS} rows)`, deepResult));
  console.log(`deep/first throughput ratio: ${(deepResult.requestsPerSecond / firstResult.requestsPerSecond).toFixed(3)}`);
  console.log(`deep/first p50 latency ratio: ${(deepResult.p50 / firstResult.p50).toFixed(3)}`);
} finally {
  await service.close();
  await fs.rm(dataDir, { recursive: true, force: true });
}
