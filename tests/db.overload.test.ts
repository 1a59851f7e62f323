// CONTRACT §2.2 (rev. 2): an exhausted pool and a statement over STATEMENT_TIMEOUT_MS are 503/8001 with retry_after, never 500/8002.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativePool } from '../src/db/pool.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let writer: TestUser;
beforeAll(async () => {
  svc = await startTestService({
    env: { RATE_LIMITS_ENABLED: 'false', DB_POOL_MAX: '2', DB_ACQUIRE_TIMEOUT_MS: '1000', STATEMENT_TIMEOUT_MS: '300' },
  });
  writer = await createUser(svc, { role: 'ceo' });
  await writer.caller.approvals.create({ action_type: 'deploy:production', title: 't', description: 'd', risk_level: 'low' });
});
afterAll(async () => {
  await svc.close();
});

function expectRetryable503(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown; body: string }) {
  expect(res.statusCode, res.body).toBe(503);
  expect(res.json()).toMatchObject({ error_detail: { error_code: 8001, error_category: 'internal', retryable: true, retry_after: 1 } });
  expect(res.headers['retry-after']).toBe('1');
}

describe('no database connection to be had in time (pool exhausted)', () => {
  it('answers 503/8001 with retry_after once DB_ACQUIRE_TIMEOUT_MS has passed', async () => {
    const pool = await nativePool(svc.deps.orm);
    const held: pg.PoolClient[] = [];
    try {
      // Every connection of the pool (DB_POOL_MAX=2) is taken.
      held.push(await pool.connect());
      held.push(await pool.connect());
      const started = Date.now();
      const res = await svc.app.inject({ method: 'GET', url: '/api/v1/approvals?limit=200', headers: writer.headers });
      expectRetryable503(res);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      for (const client of held) client.release();
    }
  });

  it('a burst far beyond the pool gets only 200 or 503/8001, never a 500', async () => {
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => svc.app.inject({ method: 'GET', url: '/api/v1/approvals?limit=200', headers: writer.headers })),
    );
    for (const res of answers) {
      if (res.statusCode !== 200) expectRetryable503(res);
    }
  });
});

describe('a statement that runs longer than STATEMENT_TIMEOUT_MS', () => {
  it('is cancelled by the server and answered 503/8001 with retry_after instead of waiting out the stall', { timeout: 10_000 }, async () => {
    // Another session holds the table: every statement touching it waits until the server cancels it.
    const blocker = new pg.Client({ connectionString: svc.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE approvals IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const res = await svc.app.inject({ method: 'GET', url: '/api/v1/approvals', headers: writer.headers });
      expectRetryable503(res);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    // The pool is healthy again afterwards.
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/approvals', headers: writer.headers })).statusCode).toBe(200);
  });
});
