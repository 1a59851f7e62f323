// The job queue (CONTRACT §1 rev. 3, background work): pg-boss on the service's database, shared by every instance, each job run once.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { defineJob, type JobType } from '../src/jobs/jobType.ts';
import { definePeriodicJob } from '../src/jobs/periodic.ts';
import { JOB_TYPES } from '../src/jobs/catalogue.ts';
import { sleep, until } from './helpers/events.ts';
import { withDatabase } from './helpers/globalSetup.ts';
import { startTestService, type TestService } from './helpers/service.ts';

/** One record per run, by the instance that ran it. */
type Run = { instance: string; n: number; attempt: number; startedAt: number; endedAt: number };
const runs: Run[] = [];

/** The same job type as each instance knows it: one name, a runner that says which instance ran it. */
function countingJob(instance: string, opts: { failFirstAttempt?: boolean; takesMs?: number } = {}) {
  return defineJob({
    name: 'test.count',
    payload: z.strictObject({ n: z.int() }),
    queue: { pollIntervalS: 0.5, concurrency: 2, batchSize: 5, retryLimit: 1 },
    async run({ n }, _env, job) {
      const startedAt = performance.now();
      if (opts.takesMs !== undefined) await sleep(opts.takesMs);
      if (opts.failFirstAttempt === true && job.retryCount === 0 && n < 0) throw new Error('first attempt fails');
      runs.push({ instance, n, attempt: job.retryCount, startedAt, endedAt: performance.now() });
    },
  });
}

const ticks: Run[] = [];
function tickingJob(instance: string) {
  return definePeriodicJob({
    name: 'test.tick',
    run: async () => {
      const startedAt = performance.now();
      await sleep(50);
      ticks.push({ instance, n: ticks.length, attempt: 0, startedAt, endedAt: performance.now() });
    },
    nextRunInS: () => 0.2,
    pollIntervalS: 0.5,
  });
}

let a: TestService;
let b: TestService;
beforeAll(async () => {
  a = await startTestService({ jobTypes: [countingJob('a', { failFirstAttempt: true, takesMs: 20 }), tickingJob('a')] });
  b = await startTestService({ databaseUrl: a.databaseUrl, jobTypes: [countingJob('b', { failFirstAttempt: true, takesMs: 20 }), tickingJob('b')] });
});
afterAll(async () => {
  await b.close();
  await a.close();
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

const sendTo = (svc: TestService, n: number) => svc.jobs.send(countingJob('sender'), { n });
const runsOf = (n: number) => runs.filter((r) => r.n === n);

describe('jobs', () => {
  it('each job sent through any instance runs exactly once, on one of the instances', async () => {
    const numbers = Array.from({ length: 40 }, (_, i) => 1000 + i);
    await Promise.all(numbers.map((n) => sendTo(n % 2 === 0 ? a : b, n)));
    await until(() => numbers.every((n) => runsOf(n).length > 0), 10_000, 'every job to run');
    await sleep(600);
    for (const n of numbers) expect(runsOf(n)).toHaveLength(1);
  });

  it('every instance is a worker: whichever instance is left runs what is sent', async () => {
    const seen: string[] = [];
    const pairJob = (instance: string) =>
      defineJob({ name: 'test.pair', payload: z.strictObject({}), queue: { pollIntervalS: 0.5 }, run: async () => void seen.push(instance) });
    const first = await startTestService({ databaseUrl: a.databaseUrl, jobTypes: [pairJob('first')] });
    const second = await startTestService({ databaseUrl: a.databaseUrl, jobTypes: [pairJob('second')] });
    await first.close();
    await second.jobs.send(pairJob('sender'), {});
    await until(() => seen.length === 1, 5000, 'the second to run it');
    const third = await startTestService({ databaseUrl: a.databaseUrl, jobTypes: [pairJob('third')] });
    await second.close();
    await third.jobs.send(pairJob('sender'), {});
    await until(() => seen.length === 2, 5000, 'the third to run it');
    await third.close();
    expect(seen).toEqual(['second', 'third']);
  });

  it('a send inside a transaction is a job only if the transaction commits', async () => {
    const em = a.deps.orm.em.fork();
    await expect(
      em.transactional(async (tx) => {
        await a.jobs.send(countingJob('sender'), { n: 3000 }, { em: tx });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await em.transactional((tx) => a.jobs.send(countingJob('sender'), { n: 3001 }, { em: tx }));
    await until(() => runsOf(3001).length === 1, 5000, 'the committed job to run');
    await sleep(600);
    expect(runsOf(3000)).toHaveLength(0);
  });

  it('a payload that does not match its schema is refused when sent', async () => {
    const type: JobType<{ n: number }> = countingJob('sender');
    await expect(a.jobs.send(type, { n: 1.5 })).rejects.toThrow();
  });

  it('a run that throws is retried (on whichever instance takes it) until it succeeds', async () => {
    await sendTo(a, -1);
    await until(() => runsOf(-1).length === 1, 10_000, 'the retry to succeed');
    expect(runsOf(-1)[0]?.attempt).toBe(1);
  });

  it('stopping an instance lets a job it is running finish first', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    // A queue only this instance works, so it is the one that runs the job.
    const slow = defineJob({
      name: 'test.slow',
      payload: z.strictObject({}),
      queue: { pollIntervalS: 0.5 },
      async run() {
        started.push(performance.now());
        await sleep(800);
        finished.push(performance.now());
      },
    });
    const own = await startTestService({ databaseUrl: a.databaseUrl, jobTypes: [slow] });
    await own.jobs.send(slow, {});
    await until(() => started.length === 1, 5000, 'the job to start');
    await own.close();
    expect(finished).toHaveLength(1);
  });
});

describe('periodic jobs', () => {
  it('run one at a time across instances, each run scheduling the next, with one run queued at most', async () => {
    await until(() => ticks.length >= 6, 10_000, 'several runs');
    const sorted = [...ticks].sort((x, y) => x.startedAt - y.startedAt);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]?.startedAt).toBeGreaterThanOrEqual(sorted[i - 1]?.endedAt ?? 0);
    const queued = await query<{ n: string }>(a.databaseUrl, `SELECT count(*) AS n FROM pgboss.job WHERE name = 'test.tick' AND state = 'created'`);
    expect(Number(queued[0]?.n)).toBeLessThanOrEqual(1);
    // One schedule (the chain's guard), however many instances registered it.
    const schedules = await query<{ name: string }>(a.databaseUrl, `SELECT name FROM pgboss.schedule WHERE name = 'test.tick'`);
    expect(schedules).toHaveLength(1);
  });
});

describe('boot', () => {
  it('two instances booting at once on an empty database both start; the schemas are built once and jobs run', async () => {
    const name = `jobs_${randomBytes(6).toString('hex')}`;
    const serverUrl = inject('pgServerUrl');
    await query(serverUrl, `CREATE DATABASE ${name}`);
    const url = withDatabase(serverUrl, name);
    const [x, y] = await Promise.all([startTestService({ databaseUrl: url }), startTestService({ databaseUrl: url })]);
    try {
      const versions = await query<{ version: number }>(url, 'SELECT version FROM pgboss.version');
      expect(versions).toHaveLength(1);
      const queues = await query<{ name: string }>(url, `SELECT name FROM pgboss.queue WHERE name NOT LIKE '\\_\\_pgboss%' ORDER BY name`);
      expect(queues.map((q) => q.name)).toEqual(JOB_TYPES.map((t) => t.name).sort());
      // Each periodic job's first run, sent at boot by both and run once.
      const periodic = JOB_TYPES.filter((t) => t.periodic === true).map((t) => t.name);
      const firstRuns = async () => query<{ name: string }>(url, `SELECT name FROM pgboss.job WHERE state = 'completed' AND name = ANY($1)`, [periodic]);
      await until(async () => (await firstRuns()).length === periodic.length, 10_000, 'the first runs');
    } finally {
      await Promise.all([x.close(), y.close()]);
    }
  });
});
