// Two instances on one database: the PostgreSQL store shares windows and in-flight slots; memory stores do not.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContextInner, recordingSink, type Context } from '../src/context/index.ts';
import { ApiError } from '../src/errors.ts';
import { applyLimits } from '../src/limits/middleware.ts';
import { RATE_LIMIT_TABLE_NAME } from '../src/limits/stores.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const PASSWORD = 'correct horse battery staple';
const LOGIN_LIMIT_3 = JSON.stringify({ 'auth.login': { limit: 3, window_s: 60 } });
const LOGIN = { path: 'auth.login', op: 'auth.login', mutation: true } as const;

function login(svc: TestService, ceo: TestUser, ip: string, password = PASSWORD) {
  return svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress: ip, payload: { username: ceo.username, password } });
}

/** A request context as the REST facade would build it for a call from `ip`. */
function contextFor(svc: TestService, ip: string): Context {
  return createContextInner({ deps: svc.deps, ip, response: recordingSink() });
}

/** Runs the limits of `call` (auth.login by default) around a call that lasts until `finish` is called. */
async function holdSlot(ctx: Context, call: Parameters<typeof applyLimits>[1] = LOGIN) {
  let finish = (): void => {};
  const done = new Promise<void>((resolve) => (finish = resolve));
  let entered = (): void => {};
  const running = new Promise<void>((resolve) => (entered = resolve));
  const limited = applyLimits(ctx, call, async () => {
    entered();
    await done;
  });
  await Promise.race([running, limited]);
  return { finish, call: limited };
}

async function refusalCode(promise: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof ApiError) return error.errorCode;
    throw error;
  }
}

describe('PostgreSQL store: two instances share every bucket', () => {
  let one: TestService;
  let two: TestService;
  let ceo: TestUser;
  beforeAll(async () => {
    one = await startTestService({ env: { RATE_LIMITS: LOGIN_LIMIT_3 } });
    two = await startTestService({ databaseUrl: one.databaseUrl, env: { RATE_LIMITS: LOGIN_LIMIT_3 } });
    ceo = await createUser(one, { role: 'ceo', password: PASSWORD });
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  it('the migration created the table rate-limiter-flexible writes to', async () => {
    const connection = one.db.orm.em.getConnection();
    const columns = await connection.execute(
      `select column_name, data_type, character_maximum_length, is_nullable, column_default from information_schema.columns where table_name = ? order by ordinal_position`,
      [RATE_LIMIT_TABLE_NAME],
    );
    expect(columns).toEqual([
      { column_name: 'key', data_type: 'character varying', character_maximum_length: 255, is_nullable: 'NO', column_default: null },
      { column_name: 'points', data_type: 'integer', character_maximum_length: null, is_nullable: 'NO', column_default: '0' },
      { column_name: 'expire', data_type: 'bigint', character_maximum_length: null, is_nullable: 'YES', column_default: null },
    ]);
    const [table] = await connection.execute(`select relpersistence from pg_class where relname = ?`, [RATE_LIMIT_TABLE_NAME]);
    expect(table).toEqual({ relpersistence: 'u' });
    const indexes = await connection.execute<{ indexdef: string }[]>(`select indexdef from pg_indexes where tablename = ? order by indexname`, [RATE_LIMIT_TABLE_NAME]);
    expect(indexes.map((i) => i.indexdef)).toEqual([
      expect.stringMatching(/^CREATE INDEX rate_limit_counters_expire_index .*\(expire\)$/),
      expect.stringMatching(/^CREATE UNIQUE INDEX rate_limit_counters_pkey .*\(key\)$/),
    ]);
  });

  it('a limit of 3 is shared: after 3 calls spread over both, the 4th is 429/5001 on either instance', async () => {
    expect(one.deps.limiter?.storeKind).toBe('postgres');
    expect((await login(one, ceo, '10.6.0.1')).statusCode).toBe(200);
    expect((await login(two, ceo, '10.6.0.1')).statusCode).toBe(200);
    expect((await login(one, ceo, '10.6.0.1')).statusCode).toBe(200);
    for (const svc of [two, one]) {
      const refused = await login(svc, ceo, '10.6.0.1');
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error_detail.error_code).toBe(5001);
    }
  });

  it('a concurrency slot held on one instance makes the other answer 429/5002 with Retry-After 1', async () => {
    const held = await holdSlot(contextFor(one, '10.6.0.2'));
    const refused = await two.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      remoteAddress: '10.6.0.2',
      headers: { accept: 'application/problem+json' },
      payload: { username: ceo.username, password: PASSWORD },
    });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ status: 429, error_code: 5002, error_category: 'rate_limit', retryable: true, retry_after: 1 });
    // The held call spent one of 3; the refused one spent nothing.
    expect(refused.headers['ratelimit-limit']).toBe('3');
    expect(refused.headers['ratelimit-remaining']).toBe('2');
    expect(refused.headers['ratelimit-reset']).toBe('1');

    held.finish();
    await held.call;
    const after = await login(two, ceo, '10.6.0.2');
    expect(after.statusCode).toBe(200);
    expect(after.headers['ratelimit-remaining']).toBe('1');
  });

  it('of N concurrent calls of a capped operation on both instances exactly one runs; the rest get 5002', async () => {
    let running = 0;
    let maxRunning = 0;
    const body = async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await sleep(300);
      running--;
    };
    const calls = Array.from({ length: 10 }, (_, i) => applyLimits(contextFor(i % 2 === 0 ? one : two, '10.6.0.3'), LOGIN, body));
    const outcomes = await Promise.all(calls.map(refusalCode));
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 5002)).toHaveLength(9);
    expect(maxRunning).toBe(1);
  });

  it('the slot is released when the call fails, so the next call runs', async () => {
    const failing = applyLimits(contextFor(one, '10.6.0.4'), LOGIN, async () => {
      throw new Error('boom');
    });
    await expect(failing).rejects.toThrow('boom');
    expect(await refusalCode(applyLimits(contextFor(two, '10.6.0.4'), LOGIN, async () => 'ran'))).toBe('ok');
  });

  it('over HTTP the slot is free again right after a call ends, whether it failed or succeeded', async () => {
    expect((await login(one, ceo, '10.6.0.5', 'wrong password, surely')).statusCode).toBe(401);
    expect((await login(two, ceo, '10.6.0.5')).statusCode).toBe(200);
    expect((await login(one, ceo, '10.6.0.5')).statusCode).toBe(200);
  });

  it('user-subject operations are capped per user: another user is not held up', async () => {
    const user = (userId: string): Context => ({
      ...contextFor(one, '10.6.0.6'),
      actor: { userId, username: userId, role: 'ceo', kind: 'human', mustChangePassword: false, mfaEnabled: false, orgRoles: [], scopedDepartments: [], sessionId: 's', via: 'bearer' },
    });
    const op = { path: 'users.create', op: 'users.create', mutation: true } as const;
    const held = await holdSlot(user('u-1'), op);
    expect(await refusalCode(applyLimits(user('u-1'), op, async () => 'second'))).toBe(5002);
    expect(await refusalCode(applyLimits(user('u-2'), op, async () => 'other user'))).toBe('ok');
    held.finish();
    await held.call;
  });
});

describe('memory store: each instance counts on its own', () => {
  let one: TestService;
  let two: TestService;
  let ceo: TestUser;
  beforeAll(async () => {
    const env = { RATE_LIMITS: LOGIN_LIMIT_3, RATE_LIMIT_STORE: 'memory' };
    one = await startTestService({ env });
    two = await startTestService({ databaseUrl: one.databaseUrl, env });
    ceo = await createUser(one, { role: 'ceo', password: PASSWORD });
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  it('three calls exhaust one instance but not the other', async () => {
    expect(one.deps.limiter?.storeKind).toBe('memory');
    for (let i = 0; i < 3; i++) expect((await login(one, ceo, '10.7.0.1')).statusCode).toBe(200);
    expect((await login(one, ceo, '10.7.0.1')).statusCode).toBe(429);
    expect((await login(two, ceo, '10.7.0.1')).statusCode).toBe(200);
  });

  it('the concurrency cap holds within the instance', async () => {
    const held = await holdSlot(contextFor(one, '10.7.0.2'));
    expect((await login(one, ceo, '10.7.0.2')).json().error_detail.error_code).toBe(5002);
    held.finish();
    await held.call;
    expect((await login(one, ceo, '10.7.0.2')).statusCode).toBe(200);
  });

  it('capabilities reports shared_rate_limits false', async () => {
    const user = await createUser(one);
    const res = await one.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: user.headers });
    expect(res.json().data.shared_rate_limits).toBe(false);
  });
});
