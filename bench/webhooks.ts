// Webhook deliveries (issue 27 targets): latency from an event's commit to its arrival at a local receiver, throughput
// per instance, two instances on one database, kill -9 with deliveries queued, and a receiver that is down for a while.
// Run by hand: npm run bench:webhooks. Scenarios: BENCH_SCENARIOS=latency,throughput,instances,kill,outage (all by
// default). Sizes: BENCH_DURATION (60 s of events for latency and throughput), BENCH_RATE (100 events/s),
// BENCH_QUEUED (1,000 deliveries queued at the kill), BENCH_DOWN_S (30 s of receiver outage).
import { createServer, type Server } from 'node:http';
import { sql } from 'kysely';
import { z } from 'zod';
import { kysely } from '../src/db/kysely.ts';
import { machine, percentile, signedInUser, startBenchDatabase, startServiceProcess, type BenchDatabase, type ServerProcess } from './lib.ts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 60);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const QUEUED = Number(process.env.BENCH_QUEUED ?? 1000);
const DOWN_S = Number(process.env.BENCH_DOWN_S ?? 30);
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'latency,throughput,instances,kill,outage').split(',').map((s) => s.trim());
/** Webhooks the throughput scenario fans each event out to: deliveries offered = events × this. */
const FAN_OUT = 10;

/** The service as deliveries need it here: limits off (one user sends thousands of events), loopback receivers allowed. */
const SERVICE_ENV = { RATE_LIMITS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' };

const APPROVAL = JSON.stringify({ action_type: 'deploy:production', title: 'Bench', description: 'webhook bench', risk_level: 'low' });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One arrival: its delivery (webhook-id), when it came, and when its event was recorded (occurred_at). */
type Arrival = { deliveryId: string; at: number; occurredAt: number };

/** A receiver on 127.0.0.1 answering 200 after `delayMs`, counting every request by webhook-id; it can go down and come back on its port. */
class Receiver {
  readonly arrivals: Arrival[] = [];
  readonly seen = new Map<string, number>();
  delayMs = 0;
  port = 0;
  private server: Server | null = null;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Distinct deliveries received, and requests beyond the first of each (duplicates). */
  get distinct(): number {
    return this.seen.size;
  }
  get duplicates(): number {
    return this.arrivals.length - this.seen.size;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = Date.now();
        const id = String(req.headers['webhook-id']);
        const event: { occurred_at?: string } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        this.arrivals.push({ deliveryId: id, at, occurredAt: Date.parse(event.occurred_at ?? '') });
        this.seen.set(id, (this.seen.get(id) ?? 0) + 1);
        const answer = () => res.writeHead(200).end();
        if (this.delayMs > 0) setTimeout(answer, this.delayMs);
        else answer();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the receiver has no TCP address');
    this.port = address.port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Waits until `n` distinct deliveries arrived; false after `timeoutMs`. */
  async waitFor(n: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.distinct < n) {
      if (Date.now() > deadline) return false;
      await sleep(100);
    }
    return true;
  }
}

type Api = { post(path: string, body?: string): Promise<{ status: number; json: unknown }> };

function api(server: ServerProcess, token: string): Api {
  return {
    async post(path, body) {
      const res = await fetch(`${server.url}/api/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body }),
      });
      const text = await res.text();
      return { status: res.status, json: text === '' ? null : JSON.parse(text) };
    },
  };
}

/** The CEO of the bench database, signed in; its bearer token. */
async function ceoToken(database: BenchDatabase): Promise<string> {
  return (await signedInUser(database, `bench_ceo_${Date.now()}`, 'ceo')).token;
}

const Created = z.object({ data: z.object({ id: z.string() }) });

async function createWebhook(client: Api, url: string): Promise<string> {
  const res = await client.post('/webhooks', JSON.stringify({ url, event_types: ['approval.created'] }));
  if (res.status !== 201) throw new Error(`creating a webhook answered ${res.status}: ${JSON.stringify(res.json)}`);
  return Created.parse(res.json).data.id;
}

/** Records `count` events (approvals created) at `rate` a second, each request sent on time whatever the others do; how many committed. */
async function recordEvents(client: Api, count: number, rate: number): Promise<number> {
  const started = performance.now();
  const pending: Promise<boolean>[] = [];
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(client.post('/approvals', APPROVAL).then((r) => r.status === 201, () => false));
  }
  return (await Promise.all(pending)).filter(Boolean).length;
}

/**
 * Where a delivery's time went on the service's side: from its job's creation (the commit) to a worker taking
 * it, and from there to its end (the attempt and its bookkeeping), p50 and p99 in ms. SQL by hand: pg-boss's
 * own table, which the ORM does not map.
 */
async function jobTimes(database: BenchDatabase): Promise<Record<string, number>> {
  const result = await sql<{ wait50: number; wait99: number; run50: number; run99: number }>`
    select percentile_cont(0.5) within group (order by extract(epoch from started_on - created_on)) * 1000 as wait50,
           percentile_cont(0.99) within group (order by extract(epoch from started_on - created_on)) * 1000 as wait99,
           percentile_cont(0.5) within group (order by extract(epoch from completed_on - started_on)) * 1000 as run50,
           percentile_cont(0.99) within group (order by extract(epoch from completed_on - started_on)) * 1000 as run99
      from pgboss.job where name = 'webhooks.deliver' and state = 'completed'`.execute(kysely(database.db.orm.em.fork()));
  const row = result.rows[0];
  return {
    'queue wait p50 (ms)': Math.round(Number(row?.wait50)),
    'queue wait p99 (ms)': Math.round(Number(row?.wait99)),
    'job run p50 (ms)': Math.round(Number(row?.run50)),
    'job run p99 (ms)': Math.round(Number(row?.run99)),
  };
}

function report(name: string, lines: Record<string, string | number>): void {
  console.log(`\n## ${name}`);
  for (const [key, value] of Object.entries(lines)) console.log(`  ${key}: ${value}`);
}

/** A fresh database and service process(es) for one scenario, closed whatever happens. */
async function withService(name: string, env: Record<string, string>, work: (ctx: { database: BenchDatabase; server: ServerProcess; client: Api; token: string }) => Promise<void>): Promise<void> {
  const database = await startBenchDatabase(`webhooks-${name}`);
  let server: ServerProcess | null = null;
  try {
    server = await startServiceProcess(database, { ...SERVICE_ENV, ...env });
    const token = await ceoToken(database);
    await work({ database, server, client: api(server, token), token });
  } finally {
    await server?.stop();
    await database.close();
  }
}

/** 100 events/s for 60 s to one receiver answering 200: commit → arrival, lost, duplicated. */
async function latency(): Promise<void> {
  const receiver = new Receiver();
  await receiver.start();
  try {
    await withService('latency', {}, async ({ database, client }) => {
      await createWebhook(client, receiver.url);
      const count = Math.round(RATE * DURATION_S);
      const committed = await recordEvents(client, count, RATE);
      const arrived = await receiver.waitFor(committed, 60_000);
      // occurred_at is taken inside the transaction, just before its commit: the figure includes the commit itself.
      const delays = receiver.arrivals.map((a) => a.at - a.occurredAt).sort((a, b) => a - b);
      report(`latency: ${RATE} events/s for ${DURATION_S} s`, {
        'events committed': committed,
        'deliveries received (distinct)': receiver.distinct,
        lost: committed - receiver.distinct,
        duplicated: receiver.duplicates,
        'all arrived': String(arrived),
        'commit → arrival p50 (ms)': percentile(delays, 50),
        'commit → arrival p99 (ms)': percentile(delays, 99),
        'commit → arrival max (ms)': delays.at(-1) ?? NaN,
        ...(await jobTimes(database)),
      });
    });
  } finally {
    await receiver.stop();
  }
}

/** Events fanned out to FAN_OUT webhooks faster than one instance delivers them: deliveries/s sustained. */
async function throughput(): Promise<void> {
  const receiver = new Receiver();
  await receiver.start();
  try {
    await withService('throughput', {}, async ({ client }) => {
      for (let i = 0; i < FAN_OUT; i++) await createWebhook(client, receiver.url);
      // Offered: RATE × FAN_OUT deliveries a second (1,000 by default), well above the target of 300.
      const count = Math.round(RATE * DURATION_S);
      const committed = await recordEvents(client, count, RATE);
      const expected = committed * FAN_OUT;
      await receiver.waitFor(expected, 300_000);
      const times = receiver.arrivals.map((a) => a.at).sort((a, b) => a - b);
      // The steady part: without the first and last 10 % of arrivals (ramp-up, tail).
      const from = times[Math.floor(times.length * 0.1)] ?? 0;
      const to = times[Math.floor(times.length * 0.9)] ?? 0;
      const steady = times.filter((t) => t >= from && t <= to).length;
      report(`throughput: ${RATE} events/s × ${FAN_OUT} webhooks for ${DURATION_S} s, one instance`, {
        'deliveries expected': expected,
        'deliveries received (distinct)': receiver.distinct,
        duplicated: receiver.duplicates,
        'deliveries/s (steady 80 %)': to > from ? (steady / ((to - from) / 1000)).toFixed(0) : 'n/a',
        'deliveries/s (first to last)': times.length > 1 ? (times.length / (((times.at(-1) ?? 0) - (times[0] ?? 0)) / 1000)).toFixed(0) : 'n/a',
      });
    });
  } finally {
    await receiver.stop();
  }
}

/** Attempts that succeeded on one instance, from its /metrics. */
async function successfulAttempts(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const match = /^agent_org_webhook_attempts_total\{result="success"\} (\d+)/m.exec(text);
  return Number(match?.[1] ?? 0);
}

/** Two instances on one database: every delivery made once (attempts at the receiver = deliveries), and both work. */
async function instances(): Promise<void> {
  const receiver = new Receiver();
  await receiver.start();
  try {
    await withService('instances', {}, async ({ database, server, client }) => {
      const second = await startServiceProcess(database, SERVICE_ENV);
      try {
        for (let i = 0; i < FAN_OUT; i++) await createWebhook(client, receiver.url);
        const count = Math.round(RATE * Math.min(DURATION_S, 30));
        const committed = await recordEvents(client, count, RATE);
        const expected = committed * FAN_OUT;
        const arrived = await receiver.waitFor(expected, 300_000);
        await sleep(2000);
        report('two instances on one database', {
          'deliveries expected': expected,
          'requests at the receiver': receiver.arrivals.length,
          'deliveries received (distinct)': receiver.distinct,
          duplicated: receiver.duplicates,
          'all arrived': String(arrived),
          'attempts by instance 1 / instance 2': `${await successfulAttempts(server)} / ${await successfulAttempts(second)}`,
        });
      } finally {
        await second.stop();
      }
    });
  } finally {
    await receiver.stop();
  }
}

/** kill -9 with QUEUED deliveries queued (the receiver slow, so they pile up): all delivered after a restart. */
async function kill(): Promise<void> {
  const receiver = new Receiver();
  await receiver.start();
  const database = await startBenchDatabase('webhooks-kill');
  let server: ServerProcess | null = null;
  try {
    server = await startServiceProcess(database, SERVICE_ENV);
    const client = api(server, await ceoToken(database));
    await createWebhook(client, receiver.url);
    // Slow answers keep the instance's attempts in flight, so what is sent meanwhile stays queued.
    receiver.delayMs = 5000;
    const committed = await recordEvents(client, QUEUED, 500);
    process.kill(server.pid, 'SIGKILL');
    await server.stop();
    server = null;
    const beforeRestart = receiver.distinct;
    receiver.delayMs = 0;
    const restartedAt = Date.now();
    server = await startServiceProcess(database, SERVICE_ENV);
    // Attempts in flight at the kill come back once their job's expiry has passed (180 s) and pg-boss notices.
    const arrived = await receiver.waitFor(committed, 600_000);
    report(`kill -9 with ${committed} deliveries queued`, {
      'received before the kill': beforeRestart,
      'received (distinct) after the restart': receiver.distinct,
      lost: committed - receiver.distinct,
      'requests beyond the first of a delivery (at least once)': receiver.duplicates,
      'all arrived': String(arrived),
      'restart → last arrival (s)': ((Math.max(...receiver.arrivals.map((a) => a.at)) - restartedAt) / 1000).toFixed(1),
    });
  } finally {
    await server?.stop();
    await database.close();
    await receiver.stop();
  }
}

/** The receiver down for DOWN_S while events keep coming (WEBHOOK_RETRY_BASE_S=1): everything arrives once it is back. */
async function outage(): Promise<void> {
  const receiver = new Receiver();
  await receiver.start();
  try {
    await withService('outage', { WEBHOOK_RETRY_BASE_S: '1' }, async ({ client }) => {
      await createWebhook(client, receiver.url);
      await receiver.stop();
      const downAt = Date.now();
      const committed = await recordEvents(client, Math.max(1, Math.round(10 * DOWN_S)), 10);
      await sleep(Math.max(0, DOWN_S * 1000 - (Date.now() - downAt)));
      await receiver.start();
      const backAt = Date.now();
      // Retries come 1, 6, 24, 120 s after the failures (±20 %): the last ones within about 2.5 min of the return.
      const arrived = await receiver.waitFor(committed, 600_000);
      report(`receiver down for ${DOWN_S} s (WEBHOOK_RETRY_BASE_S=1)`, {
        'events committed while down': committed,
        'deliveries received (distinct)': receiver.distinct,
        lost: committed - receiver.distinct,
        duplicated: receiver.duplicates,
        'all arrived': String(arrived),
        'back → last arrival (s)': ((Math.max(...receiver.arrivals.map((a) => a.at)) - backAt) / 1000).toFixed(1),
      });
    });
  } finally {
    await receiver.stop();
  }
}

console.log(`# webhook deliveries — ${machine()}`);
const runs: Record<string, () => Promise<void>> = { latency, throughput, instances, kill, outage };
for (const name of SCENARIOS) {
  const run = runs[name];
  if (!run) throw new Error(`unknown scenario ${name} (${Object.keys(runs).join(', ')})`);
  await run();
}
