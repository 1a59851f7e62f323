// Mixed load (issue 15): logins, /auth/me, user and approval lists, approval create + approve at 40 connections
// for 60 s (BENCH_DURATION, BENCH_CONNECTIONS): throughput, p50/p99 per operation, failures, and the server's RSS
// after warm-up, after the run and after 30 s idle (BENCH_IDLE).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { createAccount } from '../src/services/auth/accounts.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { machine, NODE, startBenchService } from './lib.ts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 60);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 40);
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 10);
const IDLE_S = Number(process.env.BENCH_IDLE ?? 30);
const CLIENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'mixedClient.ts');

const Report = z.object({
  seconds: z.number(),
  operations: z.record(z.string(), z.object({ count: z.number(), perSecond: z.number(), p50: z.number(), p99: z.number(), failures: z.number(), statuses: z.record(z.string(), z.number()) })),
});

async function drive(base: string, setup: unknown, seconds: number): Promise<z.infer<typeof Report>> {
  const child = spawn(NODE, [CLIENT, base, JSON.stringify(setup), String(seconds), String(CONNECTIONS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`the load generator exited with ${String(code)}`);
  return Report.parse(JSON.parse(out));
}

const rssMb = () => process.memoryUsage().rss / 2 ** 20;
/** Where the resident memory is: V8's heap, buffers outside it, and the rest (native allocations, code). */
function memoryLine(label: string): string {
  const m = process.memoryUsage();
  const mb = (n: number) => (n / 2 ** 20).toFixed(0);
  return `${label}: rss ${mb(m.rss)} MB (V8 heap ${mb(m.heapTotal)} MB of which used ${mb(m.heapUsed)}, external ${mb(m.external)}, array buffers ${mb(m.arrayBuffers)})`;
}

// Rate limits off: a handful of users sending thousands of requests a minute is the point here.
const bench = await startBenchService({ RATE_LIMITS_ENABLED: 'false' }, { name: 'mixed' });
try {
  const { deps } = bench.service;
  const em = deps.orm.em.fork();
  const account = async (username: string, role: 'ceo' | 'manager' | 'board_member' | 'observer') => {
    // Not containing the username, and not a common password (CONTRACT §3.7).
    const password = 'quiet lantern orbit 7319';
    const user = await em.transactional((tx) => createAccount({ em: tx, clock: deps.clock }, { username, password, role, mustChangePassword: false }));
    const session = await em.transactional((tx) => issueSession({ em: tx, clock: deps.clock, config: deps.config }, user.id, { ip: '127.0.0.1', userAgent: 'bench' }));
    return { username, password, token: session.accessToken };
  };
  const ceo = await account('bench_ceo', 'ceo');
  const requester = await account('bench_requester', 'manager');
  const approver = await account('bench_approver', 'board_member');
  const logins = [];
  for (let i = 0; i < 8; i++) logins.push(await account(`bench_login_${i}`, 'observer'));
  const setup = { me: ceo.token, requester: requester.token, approver: approver.token, logins: logins.map(({ username, password }) => ({ username, password })) };
  const base = await bench.service.app.listen({ port: 0, host: '127.0.0.1' });

  const warm = await drive(base, setup, WARMUP_S);
  const afterWarmup = rssMb();
  const memory = [memoryLine('after warm-up')];
  const run = await drive(base, setup, DURATION_S);
  const afterRun = rssMb();
  memory.push(memoryLine('after the run'));
  await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000));
  const afterIdle = rssMb();
  memory.push(memoryLine(`after ${IDLE_S} s idle`));

  const ops = Object.entries(run.operations).sort(([a], [b]) => a.localeCompare(b));
  const total = ops.reduce((n, [, o]) => n + o.count, 0);
  const failures = ops.reduce((n, [, o]) => n + o.failures, 0);
  const warmFailures = Object.values(warm.operations).reduce((n, o) => n + o.failures, 0);
  console.log(`# mixed load\n${machine()}, ${CONNECTIONS} connections, ${DURATION_S} s after a ${WARMUP_S} s warm-up\n`);
  console.log('| operation | requests | req/s | p50 ms | p99 ms | failed | statuses |\n|---|---|---|---|---|---|---|');
  for (const [name, o] of ops) {
    console.log(`| ${name} | ${o.count} | ${o.perSecond.toFixed(1)} | ${o.p50.toFixed(1)} | ${o.p99.toFixed(1)} | ${o.failures} | ${JSON.stringify(o.statuses)} |`);
  }
  console.log(`\ntotal ${(total / run.seconds).toFixed(0)} req/s, ${failures} failed (warm-up: ${warmFailures} failed) (target: zero)`);
  console.log(
    `RSS: after warm-up ${afterWarmup.toFixed(0)} MB, after the run ${afterRun.toFixed(0)} MB, after ${IDLE_S} s idle ${afterIdle.toFixed(0)} MB: ` +
      `${(afterIdle / afterWarmup).toFixed(2)} × warm-up (target ≤ 1.3)`,
  );
  console.log(memory.map((line) => `- ${line}`).join('\n'));
} finally {
  await bench.close();
}
