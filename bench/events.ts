// `npm run bench:events`: fan-out to 1,000 sockets against a bare `ws` broadcast, cross-instance delivery under 200 writes/s,
// RSS with 1,000 idle sockets, and what recording and publishing cost the outbox's write throughput.
// The events are recorded with recordEvent (approval.approved) in transactions of their own, as the approval service records
// them, without the approval's own writes: what is measured is the events path.
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { WebSocketServer } from 'ws';
import { z } from 'zod';
import { kysely } from '../src/db/kysely.ts';
import { nativePool } from '../src/db/pool.ts';
import { recordEvent } from '../src/events/record.ts';
import { createAccount } from '../src/services/auth/accounts.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { newToken, sha256 } from '../src/services/auth/tokens.ts';
import type { Service } from '../src/service.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { createLogger } from '../src/logger.ts';
import { createService } from '../src/service.ts';
import { DURATION_S, NODE, machine, startBenchService } from './lib.ts';

const SOCKETS = 1000;
const BROADCASTS = Number(process.env.BENCH_BROADCASTS ?? 60);
const CROSS_SOCKETS = 10;
const WRITES_PER_S = 200;
const WRITERS = 16;

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const gc = () => (typeof globalThis.gc === 'function' ? globalThis.gc() : undefined);
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

/** The clients' process and its JSON-line protocol (bench/events-clients.ts). */
function startClients() {
  const child = spawn(NODE, [fileURLToPath(new URL('./events-clients.ts', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const ask = async (command: object): Promise<unknown> => {
    child.stdin.write(`${JSON.stringify(command)}\n`);
    const { value, done } = await lines.next();
    if (done) throw new Error('the clients process ended');
    return JSON.parse(String(value));
  };
  const Samples = z.object({ samples: z.array(z.number()), frames: z.number() });
  return {
    connect: (urls: string[], subscribe: object | null) => ask({ type: 'connect', urls, subscribe }),
    collect: async () => Samples.parse(await ask({ type: 'collect' })),
    close: () => ask({ type: 'close' }),
    end: () => child.kill(),
  };
}

type Stats = { count: number; p50: number; p99: number; max: number };
function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? NaN };
}
const row = (name: string, s: Stats) => `| ${name} | ${s.count} | ${s.p50.toFixed(1)} | ${s.p99.toFixed(1)} | ${s.max.toFixed(1)} |`;

/** An ApprovalResponse whose title carries the time it was made, so every receiver can compute its latency. */
function decidedApproval() {
  const at = new Date().toISOString();
  return {
    id: randomUUID(),
    action_type: 'deploy:production',
    title: `t${String(now())}`,
    description: 'Roll out release 2026.11 to the production cluster after the canary has been green for an hour.',
    requested_by: 'bench_requester',
    risk_level: 'high' as const,
    status: 'approved' as const,
    created_at: at,
    expires_at: null,
    decided_at: at,
    decided_by: 'bench_approver',
    decision_reason: 'canary is green',
    task_id: 'task-42',
    metadata: { release: '2026.11', region: 'eu-west' },
    seconds_remaining: 0,
    urgency_level: 'no_expiry' as const,
  };
}

async function recordDecision(service: Service): Promise<void> {
  const data = decidedApproval();
  await service.deps.orm.em.fork().transactional((tx) => recordEvent(tx, { type: 'approval.approved', actor: 'bench_approver', data }));
}

/** A user with a session and `count` WebSocket tickets (seeded straight into ws_tickets: the API caps them at 5 pending). */
async function ticketsFor(service: Service, username: string, count: number): Promise<string[]> {
  const { deps } = service;
  const em = deps.orm.em.fork();
  const user = await createAccount({ em, clock: deps.clock }, { username, password: 'quiet lantern orbit 7319', role: 'manager', mustChangePassword: false });
  const session = await em.transactional((tx) => issueSession({ em: tx, clock: deps.clock, config: deps.config }, user.id, { ip: '127.0.0.1', userAgent: 'bench' }));
  const tickets = Array.from({ length: count }, () => newToken(32));
  const at = new Date();
  await kysely(em)
    .insertInto('ws_tickets')
    .values(tickets.map((t) => ({ ticketHash: sha256(t), userId: user.id, sessionId: session.sessionId, createdAt: at, expiresAt: new Date(at.getTime() + 600_000) })))
    .execute();
  return tickets;
}

const bench = await startBenchService({ RATE_LIMITS_ENABLED: 'false', EVENTS_MAX_STREAMS_PER_USER: String(SOCKETS) }, { name: 'events' });
const clients = startClients();
const out: string[] = [];
try {
  const a = bench.service;
  const baseA = (await a.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
  const subscribe = { type: 'subscribe', channels: ['approvals'] };

  // --- RSS with 1,000 idle sockets -------------------------------------------------------------------------
  const tickets = await ticketsFor(a, 'bench_fanout', SOCKETS);
  for (let i = 0; i < 5; i++) await recordDecision(a);
  gc();
  await sleep(1000);
  const before = process.memoryUsage();
  const rssBefore = before.rss;
  await clients.connect(
    tickets.map((t) => `${baseA}/api/v1/ws?ticket=${t}`),
    subscribe,
  );
  await sleep(3000);
  gc();
  await sleep(500);
  const idle = process.memoryUsage();
  const rssIdle = idle.rss;
  const heapIdle = idle.heapUsed;
  if (a.deps.events.openStreams !== SOCKETS) throw new Error(`expected ${String(SOCKETS)} open streams, have ${String(a.deps.events.openStreams)}`);

  // --- fan-out to 1,000 sockets: our service ------------------------------------------------------------------
  await clients.collect();
  const commitMs: number[] = [];
  for (let i = 0; i < BROADCASTS; i++) {
    const started = now();
    await recordDecision(a);
    commitMs.push(now() - started);
    await sleep(100);
  }
  await sleep(1000);
  const ours = await clients.collect();
  await clients.close();

  // --- the same payload broadcast by a bare ws server, same client process --------------------------------
  const bare = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => bare.once('listening', resolve));
  const address = bare.address();
  const barePort = typeof address === 'object' && address !== null ? address.port : 0;
  await clients.connect(
    Array.from({ length: SOCKETS }, () => `ws://127.0.0.1:${String(barePort)}/`),
    null,
  );
  await sleep(1000);
  await clients.collect();
  let eventId = 1;
  for (let i = 0; i < BROADCASTS; i++) {
    const frame = JSON.stringify({
      type: 'event',
      event: { id: String(eventId++), type: 'approval.approved', channel: 'approvals', occurred_at: new Date().toISOString(), actor: 'bench_approver', data: decidedApproval() },
    });
    for (const client of bare.clients) client.send(frame);
    await sleep(100);
  }
  await sleep(1000);
  const baseline = await clients.collect();
  await clients.close();
  await new Promise((resolve) => bare.close(resolve));

  // --- cross-instance delivery under 200 writes/s ---------------------------------------------------------
  // Instance B: its own ORM, pool and LISTEN connection on A's database, as a second process would have.
  const secondConfig = loadConfig({ DATA_DIR: bench.dataDir, LOG_LEVEL: 'warn', PORT: '0', RATE_LIMITS_ENABLED: 'false', DATABASE_URL: a.db.url });
  const secondDb = await openDatabase(secondConfig, { debug: () => undefined, info: () => undefined, warn: (m) => console.warn(m) });
  const secondService = await createService(secondConfig, createLogger(secondConfig.logLevel), { database: secondDb });
  const second = {
    service: secondService,
    async close() {
      await secondService.close();
      await secondDb.close();
    },
  };
  let writes = 0;
  let failedWrites = 0;
  let writeSeconds = 0;
  let cross: { samples: number[]; frames: number };
  try {
    const b = second.service;
    const baseB = (await b.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
    const crossTickets = await ticketsFor(a, 'bench_cross', CROSS_SOCKETS);
    await clients.connect(
      crossTickets.map((t) => `${baseB}/api/v1/ws?ticket=${t}`),
      subscribe,
    );
    await sleep(500);
    await clients.collect();
    // Paced: write i is started at start + i × 5 ms, whether or not earlier ones have committed.
    const started = now();
    const inFlight = new Set<Promise<void>>();
    for (let i = 0; now() - started < DURATION_S * 1000; i++) {
      const due = started + (i * 1000) / WRITES_PER_S;
      if (due > now()) await sleep(due - now());
      const write: Promise<void> = recordDecision(a)
        .catch(() => void failedWrites++)
        .then(() => void inFlight.delete(write));
      inFlight.add(write);
      writes++;
    }
    await Promise.all(inFlight);
    writeSeconds = (now() - started) / 1000;
    await sleep(1000);
    cross = await clients.collect();
    await clients.close();
  } finally {
    await second.close();
  }

  // --- what recording and publishing cost: concurrent single-event transactions ----------------------------
  const pool = await nativePool(a.deps.orm);
  // A table like the outbox, written without recordEvent (the bench's own; not in the entities, hence raw SQL).
  await pool.query('create table bench_events_plain (like events including defaults)');
  const throughput = async (write: () => Promise<unknown>) => {
    let count = 0;
    const until = now() + 5000;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (now() < until) {
          await write();
          count++;
        }
      }),
    );
    return count / 5;
  };
  const data = decidedApproval();
  const withTrigger = await throughput(() => a.deps.orm.em.fork().transactional((tx) => recordEvent(tx, { type: 'approval.approved', actor: 'bench', data })));
  // The same transaction through the same ORM path, without recordEvent's validation, mark and publication.
  const plain = await throughput(() =>
    a.deps.orm.em
      .fork()
      .transactional((tx) =>
        tx.execute(`insert into bench_events_plain (type, channel, occurred_at, actor, data) values ('approval.approved', 'approvals', now(), 'bench', ?)`, [JSON.stringify(data)]),
      ),
  );

  const ourStats = stats(ours.samples);
  const bareStats = stats(baseline.samples);
  const crossStats = stats(cross.samples);
  out.push(
    `### ${machine()}`,
    '',
    `Load average when the runs ended: ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')} (1/5/15 min; the machine is shared).`,
    '',
    `Events: \`approval.approved\` recorded with recordEvent in its own transaction (as the approval service records it, without the approval's own writes), ` +
      `~${String(JSON.stringify(decidedApproval()).length + 130)} bytes per frame. Clients: ${String(SOCKETS)} \`ws\` sockets in one separate process; ` +
      `latency = receive time − the time stamped into the event just before its transaction started (ours) or just before broadcasting (bare ws).`,
    '',
    `**Fan-out**, ${String(BROADCASTS)} events 100 ms apart to ${String(SOCKETS)} subscribed sockets:`,
    '',
    '| server | samples | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|',
    row('agent-org (commit → publication → NOTIFY → outbox read → 1,000 sends)', ourStats),
    row('bare ws server broadcasting the same payload', bareStats),
    '',
    `p99 ratio agent-org / bare ws: **${(ourStats.p99 / bareStats.p99).toFixed(2)}** (target ≤ 2); the recording transaction itself took p50 ${stats(commitMs).p50.toFixed(1)} ms.`,
    '',
    `**Cross-instance**: ${String(writes)} events written (${String(failedWrites)} failed) through instance A at ${(writes / writeSeconds).toFixed(0)} writes/s for ${writeSeconds.toFixed(0)} s, received by ${String(CROSS_SOCKETS)} sockets on instance B (both in this process, each with its own ORM, pool and LISTEN connection, one database):`,
    '',
    '| path | samples | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|',
    row('commit on A → frame from B', crossStats),
    '',
    `**Memory** (this process runs with \`npm start\`'s \`--max-semi-space-size=8\`): RSS of the process serving the sockets ${mib(rssBefore)} MiB before, ` +
      `${mib(rssIdle)} MiB with ${String(SOCKETS)} idle subscribed sockets (+${mib(rssIdle - rssBefore)} MiB; heap used ${mib(before.heapUsed)} → ${mib(heapIdle)} MiB, ` +
      `heap total ${mib(before.heapTotal)} → ${mib(idle.heapTotal)} MiB), target < 250 MB.`,
    '',
    `**Outbox write throughput**, ${String(WRITERS)} concurrent writers, one event per transaction, 5 s: ${withTrigger.toFixed(0)} transactions/s through recordEvent ` +
      `(each commit followed by its publication), ${plain.toFixed(0)} transactions/s inserting the same row into a copy of the table through the same ORM path (${((withTrigger / plain) * 100).toFixed(0)} %).`,
  );
  console.log(out.join('\n'));
} finally {
  clients.end();
  await bench.close();
}
