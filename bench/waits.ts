// Waiting for a decision (CONTRACT §4.11, issue 27 target): 1,000 GET /approvals/{id}?wait_s=60 held at once on one
// instance — the service's RSS and CPU while they are held against idle — then one decision at a time: how long until
// its wait is answered while the others keep waiting, and finally how late the rest end at their wait_s.
// Run by hand: npm run bench:waits  (BENCH_WAITS=1000 held waits, 20 per user; BENCH_DECISIONS=5 single decisions;
// BENCH_WAITS_GC=1 takes every memory reading after a full GC, to tell what the waits keep from garbage not yet collected).
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { z } from 'zod';
import { kysely } from '../src/db/kysely.ts';
import { freePort } from '../src/net/freePort.ts';
import { MAX_WAITS_PER_USER } from '../src/services/approvals/waiting.ts';
import { machine, median, percentile, rssBytes, signedInUser, startBenchDatabase, startServiceProcess, type BenchDatabase, type ServerProcess } from './lib.ts';

const WAITS = Number(process.env.BENCH_WAITS ?? 1000);
const DECISIONS = Number(process.env.BENCH_DECISIONS ?? 5);
const WAIT_S = 60;
/** Users holding the waits: each may hold MAX_WAITS_PER_USER at once (the cap stays on without rate limits). */
const USERS = Math.ceil(WAITS / MAX_WAITS_PER_USER);
/** Approvals decided during the warm-up, each while a wait is held on it, so the wake path is not measured cold. */
const WARM_DECISIONS = 10;
/** Plain reads of the warm-up, beyond the approvals it creates. */
const WARM_READS = 300;
/** How long the others are watched after each decision, to see that none of them ends with it. */
const STILL_HELD_S = 3;
/** The window over which idle CPU is measured, before and while the waits are held. */
const CPU_WINDOW_S = 5;
const FORCED_GC = process.env.BENCH_WAITS_GC === '1';

const APPROVAL = JSON.stringify({ action_type: 'deploy:production', title: 'Bench', description: 'waits bench', risk_level: 'low', ttl_seconds: null });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MiB = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(', ');

// Enough sockets for every wait at once, plus the decisions and checks sent while they are held.
const agent = new Agent({ connections: WAITS + 100, headersTimeout: (WAIT_S + 60) * 1000, bodyTimeout: (WAIT_S + 60) * 1000 });

type Answer = { status: number; json: unknown };

async function call(server: ServerProcess, token: string, method: 'GET' | 'POST', path: string, body?: string): Promise<Answer> {
  const res = await request(`${server.url}/api/v1${path}`, {
    method,
    dispatcher: agent,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text === '' ? null : JSON.parse(text) };
}

const ApprovalAnswer = z.object({ data: z.object({ id: z.string(), status: z.string() }) });

async function createApproval(server: ServerProcess, token: string): Promise<string> {
  const res = await call(server, token, 'POST', '/approvals', APPROVAL);
  if (res.status !== 201) throw new Error(`creating an approval answered ${res.status}: ${JSON.stringify(res.json)}`);
  return ApprovalAnswer.parse(res.json).data.id;
}

async function approve(server: ServerProcess, token: string, approvalId: string): Promise<void> {
  const res = await call(server, token, 'POST', `/approvals/${approvalId}/approve`, JSON.stringify({ comment: 'bench' }));
  if (res.status !== 200) throw new Error(`approving ${approvalId} answered ${res.status}: ${JSON.stringify(res.json)}`);
}

/** One held GET ?wait_s: when it was sent and when (and with what) it was answered. */
type Wait = { approvalId: string; sentAt: number; answeredAt: number | null; httpStatus: number | null; approvalStatus: string | null; done: Promise<void> };

function startWait(server: ServerProcess, token: string, approvalId: string, waitS: number): Wait {
  const wait: Wait = { approvalId, sentAt: performance.now(), answeredAt: null, httpStatus: null, approvalStatus: null, done: Promise.resolve() };
  wait.done = call(server, token, 'GET', `/approvals/${approvalId}?wait_s=${waitS}`).then(
    (res) => {
      wait.answeredAt = performance.now();
      wait.httpStatus = res.status;
      wait.approvalStatus = ApprovalAnswer.safeParse(res.json).data?.data.status ?? null;
    },
    (error: unknown) => {
      wait.answeredAt = performance.now();
      wait.approvalStatus = `error: ${String(error)}`;
    },
  );
  return wait;
}

/** Rows of approval_waits: one per wait in flight, written when it starts to hold. */
async function heldSlots(database: BenchDatabase): Promise<number> {
  const row = await kysely(database.db.orm.em.fork())
    .selectFrom('approval_waits')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? NaN);
}

/** Polls approval_waits until `count` waits hold (30 s at most); the rows then. */
async function untilHeld(database: BenchDatabase, count: number): Promise<number> {
  const deadline = performance.now() + 30_000;
  let rows = await heldSlots(database);
  while (rows < count && performance.now() < deadline) {
    await sleep(50);
    rows = await heldSlots(database);
  }
  return rows;
}

/** A full garbage collection in the service on demand. */
type Collector = { collect(): Promise<void>; close(): void };

const InspectorTargets = z.array(z.object({ webSocketDebuggerUrl: z.string() })).min(1);
const InspectorReply = z.object({ id: z.number().optional() });

/**
 * The service's inspector, opened by SIGUSR1 on the port its NODE_OPTIONS named (`--inspect-port`): a full GC
 * through it (HeapProfiler.collectGarbage), as the service is not started with --expose-gc.
 */
async function openCollector(pid: number, port: number): Promise<Collector> {
  process.kill(pid, 'SIGUSR1');
  const deadline = performance.now() + 10_000;
  let url: string | undefined;
  while (url === undefined) {
    url = await fetch(`http://127.0.0.1:${port}/json/list`).then(
      async (res) => InspectorTargets.parse(await res.json())[0]?.webSocketDebuggerUrl,
      () => undefined,
    );
    if (url === undefined && performance.now() > deadline) throw new Error('the service\'s inspector did not open');
    if (url === undefined) await sleep(100);
  }
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error('could not reach the service\'s inspector')), { once: true });
  });
  let sequence = 0;
  return {
    collect: () =>
      new Promise<void>((resolve) => {
        const id = ++sequence;
        const onMessage = (message: MessageEvent) => {
          if (InspectorReply.parse(JSON.parse(String(message.data))).id !== id) return;
          socket.removeEventListener('message', onMessage);
          resolve();
        };
        socket.addEventListener('message', onMessage);
        socket.send(JSON.stringify({ id, method: 'HeapProfiler.collectGarbage' }));
      }),
    close: () => socket.close(),
  };
}

/** The service's RSS, the median of a few samples a tenth of a second apart (one sample may catch a GC mid-way). */
async function settledRss(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 11; i++) {
    samples.push(rssBytes(pid));
    await sleep(100);
  }
  return median(samples);
}

/** The V8 heap in use, from the service's own /metrics (prom-client's default metrics): where an RSS change lives. */
async function heapUsed(server: ServerProcess): Promise<number> {
  const res = await request(`${server.url}/metrics`, { dispatcher: agent });
  const text = await res.body.text();
  return Number(/^nodejs_heap_size_used_bytes (\S+)/m.exec(text)?.[1] ?? NaN);
}

/** RSS and V8 heap in use now; with a collector, after a full GC and a moment for V8 to give pages back. */
async function memory(server: ServerProcess, collector: Collector | null): Promise<{ rss: number; heap: number }> {
  if (collector) {
    await collector.collect();
    await sleep(500);
  }
  return { rss: await settledRss(server.pid), heap: await heapUsed(server) };
}

/** CPU seconds the service spends per second of wall time over `seconds` in which nothing is asked of it. */
async function idleCpuPerSecond(server: ServerProcess, seconds: number): Promise<number> {
  const cpu = server.cpuSeconds();
  const started = performance.now();
  await sleep(seconds * 1000);
  return (server.cpuSeconds() - cpu) / ((performance.now() - started) / 1000);
}

const failures: string[] = [];
function check(ok: boolean, what: string): string {
  if (!ok) failures.push(what);
  return ok ? 'yes' : 'NO';
}

console.log(`# approval waits — ${machine()}`);
console.log(`load average at the start (1, 5, 15 min): ${load()}`);
console.log(FORCED_GC ? 'memory read after a full GC each time (BENCH_WAITS_GC=1, the inspector open)' : 'memory read as the service runs (no forced GC)');
const database = await startBenchDatabase('waits');
let server: ServerProcess | null = null;
let collector: Collector | null = null;
try {
  // The approvals' author cannot decide them (CONTRACT §3.1): a writer asks, the CEO decides, observers wait.
  const requester = await signedInUser(database, 'bench_requester', 'pair_programmer');
  const decider = await signedInUser(database, 'bench_decider', 'ceo');
  const waiters: string[] = [];
  for (let u = 0; u < USERS; u++) waiters.push((await signedInUser(database, `bench_waiter_${u}`, 'observer')).token);
  const inspectPort = FORCED_GC ? await freePort() : 0;
  const service = await startServiceProcess(database, { RATE_LIMITS_ENABLED: 'false', ...(FORCED_GC ? { NODE_OPTIONS: `--inspect-port=127.0.0.1:${inspectPort}` } : {}) });
  server = service;
  const { pid } = service;
  if (FORCED_GC) collector = await openCollector(pid, inspectPort);
  const tokenOf = (i: number) => waiters[Math.floor(i / MAX_WAITS_PER_USER)] ?? '';

  // Warm-up: the approvals are created through the API, read, waited on briefly, and a few decided while waited on.
  const warmStarted = performance.now();
  const approvals: string[] = [];
  for (let i = 0; i < WAITS; i++) approvals.push(await createApproval(service, requester.token));
  const warmApprovals: string[] = [];
  for (let i = 0; i < WARM_DECISIONS; i++) warmApprovals.push(await createApproval(service, requester.token));
  for (let i = 0; i < WARM_READS; i++) {
    const res = await call(service, tokenOf(i % WAITS), 'GET', `/approvals/${approvals[i % WAITS] ?? ''}`);
    if (res.status !== 200) throw new Error(`a warm-up read answered ${res.status}`);
  }
  const warmWaits = warmApprovals.map((id, i) => startWait(service, tokenOf(i), id, WAIT_S));
  await untilHeld(database, warmWaits.length);
  for (const id of warmApprovals) await approve(service, decider.token, id);
  await Promise.all(warmWaits.map((w) => w.done));
  const brief = approvals.slice(0, MAX_WAITS_PER_USER).map((id) => startWait(service, tokenOf(WAITS - 1), id, 1));
  await Promise.all(brief.map((w) => w.done));
  const warmRequests = WAITS + 3 * WARM_DECISIONS + WARM_READS + brief.length;
  const warmOk = warmWaits.every((w) => w.approvalStatus === 'approved') && brief.every((w) => w.approvalStatus === 'pending');
  check(warmOk, 'the warm-up waits ended as they should');

  await sleep(2000);
  const idle = await memory(service, collector);
  const idleCpu = await idleCpuPerSecond(service, CPU_WINDOW_S);
  console.log(`\n## idle, after a warm-up of ${warmRequests} requests (${((performance.now() - warmStarted) / 1000).toFixed(1)} s)`);
  console.log(`  service RSS: ${MiB(idle.rss)} MiB (V8 heap in use ${MiB(idle.heap)} MiB)`);
  console.log(`  service CPU while idle: ${(idleCpu * 1000).toFixed(1)} ms per second`);

  // Every wait at once: wait i on approval i, held by waiter i / 20, each on a socket of its own.
  let peakRss = idle.rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssBytes(pid))), 50);
  const opened = performance.now();
  const waits = approvals.map((id, i) => startWait(service, tokenOf(i), id, WAIT_S));
  const expiresAt = opened + WAIT_S * 1000;
  const slots = await untilHeld(database, WAITS);
  const allHeldMs = performance.now() - opened;
  const answeredEarly = waits.filter((w) => w.answeredAt !== null).length;

  await sleep(2000);
  const held = await memory(service, collector);
  const heldCpu = await idleCpuPerSecond(service, CPU_WINDOW_S);
  console.log(`\n## ${WAITS} waits held (GET /approvals/{id}?wait_s=${WAIT_S}, ${USERS} users × ${MAX_WAITS_PER_USER}, one socket each)`);
  console.log(`  sent → every slot row written (approval_waits): ${allHeldMs.toFixed(0)} ms; rows ${slots}, answered already ${answeredEarly}`);
  console.log(`  all held: ${check(slots === WAITS && answeredEarly === 0, `all ${WAITS} waits held`)}`);
  console.log(`  service RSS: ${MiB(held.rss)} MiB (V8 heap in use ${MiB(held.heap)} MiB), peak while opening ${MiB(peakRss)} MiB`);
  console.log(`  RSS added by ${WAITS} held waits: ${MiB(held.rss - idle.rss)} MiB (target < 50); heap added ${MiB(held.heap - idle.heap)} MiB`);
  console.log(`  service CPU while they are held: ${(heldCpu * 1000).toFixed(1)} ms per second (idle: ${(idleCpu * 1000).toFixed(1)})`);

  // One decision at a time, on waits of different users; after each, the others must still be held.
  console.log(`\n## one decision at a time (POST /approvals/{id}/approve as the CEO), ${DECISIONS} times`);
  console.log(`| # | decision answered ms | its wait answered ms | wait's status | others held ${STILL_HELD_S} s later (rows / unanswered) |\n|---|---|---|---|---|`);
  const decided = new Set<number>();
  const latencies: number[] = [];
  for (let d = 0; d < DECISIONS; d++) {
    const index = Math.floor(((d + 0.5) * WAITS) / DECISIONS);
    const wait = waits[index];
    if (!wait) throw new Error(`no wait ${index}`);
    const sent = performance.now();
    await approve(service, decider.token, wait.approvalId);
    const decisionMs = performance.now() - sent;
    await Promise.race([wait.done, sleep(5000)]);
    decided.add(index);
    const answerMs = wait.answeredAt === null ? NaN : wait.answeredAt - sent;
    latencies.push(answerMs);
    await sleep(STILL_HELD_S * 1000);
    const rows = await heldSlots(database);
    const unanswered = waits.filter((w, i) => !decided.has(i) && w.answeredAt === null).length;
    const others = WAITS - decided.size;
    const statusOk = check(wait.approvalStatus === 'approved' && wait.httpStatus === 200, `decision ${d + 1}: its wait answered approved`);
    const othersOk = check(rows === others && unanswered === others, `decision ${d + 1}: the other ${others} still held`);
    console.log(`| ${d + 1} | ${decisionMs.toFixed(1)} | ${answerMs.toFixed(1)} | ${wait.approvalStatus ?? 'none'} (${statusOk}) | ${rows} / ${unanswered} of ${others} (${othersOk}) |`);
  }
  console.log(`decision sent → its wait answered, max of ${DECISIONS}: ${Math.max(...latencies).toFixed(1)} ms (target < 1000); median ${median(latencies).toFixed(1)} ms`);
  const checksDone = performance.now();
  clearInterval(sampler);
  check(checksDone < expiresAt, 'the measurements ended before the waits expire');
  console.log(`measurements done ${((expiresAt - checksDone) / 1000).toFixed(1)} s before the first wait's wait_s ran out; peak RSS while held ${MiB(peakRss)} MiB`);

  // The rest end at their wait_s, still pending.
  await Promise.all(waits.map((w) => w.done));
  const rest = waits.filter((_, i) => !decided.has(i));
  const late = rest.map((w) => (w.answeredAt ?? NaN) - w.sentAt - WAIT_S * 1000).sort((a, b) => a - b);
  const lastAnswer = Math.max(...rest.map((w) => w.answeredAt ?? NaN));
  const pendingOk = rest.every((w) => w.httpStatus === 200 && w.approvalStatus === 'pending');
  const rowsAfter = await heldSlots(database);
  const after = await memory(service, collector);
  console.log(`\n## the other ${rest.length} ended by their wait_s (${WAIT_S} s)`);
  console.log(`  answered 200 with status pending: ${check(pendingOk, 'the rest answered pending at their wait_s')}; approval_waits rows left ${rowsAfter} (${check(rowsAfter === 0, 'every slot freed')})`);
  // A wait's wait_s runs from when the service takes it up; the client's send was earlier by its time in the
  // queue while every wait arrived at once, so the figures below hold that time too.
  console.log(`  answered after send + wait_s by: p50 ${percentile(late, 50).toFixed(0)} ms, p99 ${percentile(late, 99).toFixed(0)} ms, max ${(late.at(-1) ?? NaN).toFixed(0)} ms`);
  console.log(`  first send + wait_s → last answer: ${((lastAnswer - expiresAt) / 1000).toFixed(2)} s; every wait held + wait_s → last answer: ${((lastAnswer - (opened + allHeldMs + WAIT_S * 1000)) / 1000).toFixed(2)} s`);
  console.log(`  service RSS after they ended: ${MiB(after.rss)} MiB (V8 heap in use ${MiB(after.heap)} MiB)`);
  console.log(`\nload average at the end (1, 5, 15 min): ${load()}`);
  if (failures.length > 0) {
    console.log(`\nFAILED checks: ${failures.join('; ')}`);
    process.exitCode = 1;
  }
} finally {
  collector?.close();
  await server?.stop();
  await agent.close();
  await database.close();
}
