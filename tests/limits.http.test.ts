// Rate limits over HTTP: RateLimit-* headers, 429 in both error formats, window boundaries, global limit, overrides, client IP.
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { createService } from '../src/service.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';
import type { Clock } from '../src/contracts/clock.ts';

const PASSWORD = 'correct horse battery staple';
// A window boundary (hour-aligned, so also minute-aligned) a little ahead of real time.
const START = Math.ceil(Date.now() / 3_600_000) * 3_600_000;

function login(svc: TestService, ceo: TestUser, ip: string, extra: { headers?: Record<string, string>; password?: string } = {}) {
  const request: InjectOptions = {
    method: 'POST',
    url: '/api/v1/auth/login',
    remoteAddress: ip,
    payload: { username: ceo.username, password: extra.password ?? PASSWORD },
    ...(extra.headers ? { headers: extra.headers } : {}),
  };
  return svc.app.inject(request);
}

function rateHeaders(res: { headers: Record<string, unknown> }) {
  return {
    limit: res.headers['ratelimit-limit'],
    remaining: res.headers['ratelimit-remaining'],
    reset: res.headers['ratelimit-reset'],
  };
}

describe('auth.login: 10 per 60 s per client IP (5001)', () => {
  let svc: TestService;
  let ceo: TestUser;
  const clock: Clock & { t: number } = { t: START, now: () => new Date(clock.t) };
  beforeAll(async () => {
    svc = await startTestService({ clock });
    ceo = await createUser(svc, { role: 'ceo', password: PASSWORD });
  });
  afterAll(() => svc.close());

  it('a successful call carries RateLimit-Limit, -Remaining and -Reset', async () => {
    clock.t = START;
    const res = await login(svc, ceo, '10.1.0.1');
    expect(res.statusCode).toBe(200);
    expect(rateHeaders(res)).toEqual({ limit: '10', remaining: '9', reset: '0' });
  });

  it('the first 10 calls pass and the 11th is refused with 429/5001, Retry-After and the headers', async () => {
    clock.t = START;
    const remaining: unknown[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await login(svc, ceo, '10.1.0.2');
      expect(res.statusCode).toBe(200);
      remaining.push(res.headers['ratelimit-remaining']);
    }
    expect(remaining).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);

    const refused = await login(svc, ceo, '10.1.0.2');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    // At a window's start the full window must become the previous one and decay to 9 of 10: 60 s + 6 s.
    expect(refused.headers['retry-after']).toBe('66');
    expect(rateHeaders(refused)).toEqual({ limit: '10', remaining: '0', reset: '66' });
    const body = refused.json();
    expect(body).toMatchObject({
      data: null,
      success: false,
      error_detail: { error_code: 5001, error_category: 'rate_limit', title: 'Rate Limit Exceeded', retryable: true, retry_after: 66 },
    });
    expect(body.error).toBe(body.error_detail.detail);
  });

  it('the 429 is a bare ProblemDetail when Accept prefers application/problem+json', async () => {
    clock.t = START;
    for (let i = 0; i < 10; i++) expect((await login(svc, ceo, '10.1.0.3')).statusCode).toBe(200);
    const refused = await login(svc, ceo, '10.1.0.3', { headers: { accept: 'application/problem+json' } });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(refused.headers['retry-after']).toBe('66');
    expect(refused.json()).toEqual({
      type: 'http://agent-org.test/docs/errors#rate_limit',
      title: 'Rate Limit Exceeded',
      status: 429,
      detail: expect.any(String),
      instance: refused.headers['x-request-id'],
      error_code: 5001,
      error_category: 'rate_limit',
      retryable: true,
      retry_after: 66,
    });
  });

  it('refused calls are not counted: the call succeeds exactly when retry_after has passed', async () => {
    clock.t = START;
    for (let i = 0; i < 10; i++) expect((await login(svc, ceo, '10.1.0.4')).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await login(svc, ceo, '10.1.0.4')).statusCode).toBe(429);
    clock.t = START + 65_000;
    const early = await login(svc, ceo, '10.1.0.4');
    expect(early.statusCode).toBe(429);
    expect(early.headers['retry-after']).toBe('1');
    clock.t = START + 66_000;
    const allowed = await login(svc, ceo, '10.1.0.4');
    expect(allowed.statusCode).toBe(200);
    expect(rateHeaders(allowed)).toMatchObject({ limit: '10', remaining: '0' });
  });

  it('each client IP has its own window', async () => {
    clock.t = START;
    for (let i = 0; i < 10; i++) await login(svc, ceo, '10.1.0.5');
    expect((await login(svc, ceo, '10.1.0.5')).statusCode).toBe(429);
    expect((await login(svc, ceo, '10.1.0.6')).statusCode).toBe(200);
  });

  it('the dashboard transport (/api/trpc) sends the same headers and the ProblemDetail in error.data', async () => {
    clock.t = START;
    const call = () =>
      svc.app.inject({ method: 'POST', url: '/api/trpc/auth.login', remoteAddress: '10.1.0.8', payload: { username: ceo.username, password: PASSWORD } });
    for (let i = 0; i < 10; i++) {
      const res = await call();
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-remaining']).toBe(String(9 - i));
    }
    const refused = await call();
    expect(refused.statusCode).toBe(429);
    expect(rateHeaders(refused)).toEqual({ limit: '10', remaining: '0', reset: '66' });
    expect(refused.json().error.data.problem).toMatchObject({ status: 429, error_code: 5001, retry_after: 66 });
  });

  it('a call that fails for another reason still counts, and its answer carries the headers', async () => {
    clock.t = START;
    const wrong = await login(svc, ceo, '10.1.0.7', { password: 'not the password at all' });
    expect(wrong.statusCode).toBe(401);
    expect(rateHeaders(wrong)).toEqual({ limit: '10', remaining: '9', reset: '0' });
  });
});

describe('users.create: 5 per 60 s per user, whatever the IP', () => {
  let svc: TestService;
  let ceo: TestUser;
  beforeAll(async () => {
    svc = await startTestService();
    ceo = await createUser(svc, { role: 'ceo' });
  });
  afterAll(() => svc.close());

  const create = (i: number, ip: string) =>
    svc.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      remoteAddress: ip,
      headers: ceo.headers,
      payload: { username: `member_${i}`, password: PASSWORD, role: 'observer' },
    });

  it('the 6th create is refused even from another address', async () => {
    for (let i = 0; i < 5; i++) expect((await create(i, `10.2.0.${i + 1}`)).statusCode).toBe(201);
    const refused = await create(5, '10.2.0.99');
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error_detail.error_code).toBe(5001);
    expect(rateHeaders(refused)).toMatchObject({ limit: '5', remaining: '0' });
  });
});

describe('global limit per subject (5000)', () => {
  let svc: TestService;
  let ceo: TestUser;
  beforeAll(async () => {
    svc = await startTestService({
      env: { RATE_LIMITS: JSON.stringify({ 'global.authenticated': { limit: 3, window_s: 60 }, 'global.anonymous': { limit: 2, window_s: 60 } }) },
    });
    ceo = await createUser(svc, { role: 'ceo', password: PASSWORD });
  });
  afterAll(() => svc.close());

  it('a signed-in user is counted by user id: the 4th call in the window is 429/5000', async () => {
    const user = await createUser(svc);
    for (let i = 0; i < 3; i++) {
      const ok = await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: user.headers, remoteAddress: `10.3.0.${i + 1}` });
      expect(ok.statusCode).toBe(200);
      // Operations without a per-operation limit carry no RateLimit-* headers on success.
      expect(ok.headers['ratelimit-limit']).toBeUndefined();
    }
    const refused = await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: { ...user.headers, accept: 'application/problem+json' } });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(refused.json()).toMatchObject({ status: 429, error_code: 5000, error_category: 'rate_limit', retryable: true });
    const wait = refused.json().retry_after;
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(refused.headers['retry-after']).toBe(String(wait));
    // The headers describe the bucket that refused.
    expect(rateHeaders(refused)).toEqual({ limit: '3', remaining: '0', reset: String(wait) });

    const other = await createUser(svc);
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: other.headers })).statusCode).toBe(200);
  });

  it('anonymous calls are counted by client IP, before the operation limit', async () => {
    expect((await login(svc, ceo, '10.3.1.1')).statusCode).toBe(200);
    expect((await login(svc, ceo, '10.3.1.1')).statusCode).toBe(200);
    const refused = await login(svc, ceo, '10.3.1.1');
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error_detail.error_code).toBe(5000);
    expect(refused.headers['ratelimit-limit']).toBe('2');
    expect((await login(svc, ceo, '10.3.1.2')).statusCode).toBe(200);
  });

  it('requests refused by authentication count against the IP, so a flood of bad credentials ends in 429/5000', async () => {
    const anonymous = (headers: Record<string, string> = {}) =>
      svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers, remoteAddress: '10.3.3.1' });
    expect((await anonymous()).statusCode).toBe(401);
    expect((await anonymous({ authorization: `Bearer ${'x'.repeat(43)}` })).statusCode).toBe(401);
    const refused = await anonymous();
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error_detail.error_code).toBe(5000);
    // Another address is still answered with the 401 it earns.
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', remoteAddress: '10.3.3.2' })).statusCode).toBe(401);
  });

  it('healthz, readyz and setup status are exempt', async () => {
    for (const url of ['/api/v1/healthz', '/api/v1/readyz', '/api/v1/setup/status']) {
      for (let i = 0; i < 5; i++) {
        const res = await svc.app.inject({ method: 'GET', url, remoteAddress: '10.3.2.2' });
        expect(res.statusCode, `${url} call ${i + 1}`).toBe(200);
        expect(res.headers['ratelimit-limit']).toBeUndefined();
      }
    }
  });
});

describe('RATE_LIMITS overrides and RATE_LIMITS_ENABLED', () => {
  const tight = JSON.stringify({ 'auth.login': { limit: 1, window_s: 60 } });
  let svc: TestService;
  let off: TestService;
  let ceo: TestUser;
  beforeAll(async () => {
    svc = await startTestService({ env: { RATE_LIMITS: tight } });
    ceo = await createUser(svc, { role: 'ceo', password: PASSWORD });
    off = await startTestService({ databaseUrl: svc.databaseUrl, env: { RATE_LIMITS: tight, RATE_LIMITS_ENABLED: 'false' } });
  });
  afterAll(async () => {
    await off.close();
    await svc.close();
  });

  it('RATE_LIMITS replaces an operation limit', async () => {
    const first = await login(svc, ceo, '10.4.0.1');
    expect(first.statusCode).toBe(200);
    expect(rateHeaders(first)).toMatchObject({ limit: '1', remaining: '0' });
    expect((await login(svc, ceo, '10.4.0.1')).statusCode).toBe(429);
  });

  it('RATE_LIMITS_ENABLED=false turns the limits off: no 429, no RateLimit-* headers', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await login(off, ceo, '10.4.0.2');
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });

  it('but not the login throttle of CONTRACT §3.4: the 11th consecutive failure is still refused', async () => {
    for (let i = 0; i < 10; i++) expect((await login(off, ceo, '10.4.0.3', { password: 'wrong password here' })).statusCode).toBe(401);
    const refused = await login(off, ceo, '10.4.0.3', { password: 'wrong password here' });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error_detail.error_code).toBe(5001);
  });

  it('capabilities reports shared_rate_limits only while limits are on', async () => {
    const user = await createUser(svc);
    const on = await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: user.headers });
    expect(on.json().data.shared_rate_limits).toBe(true);
    const disabled = await off.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: user.headers });
    expect(disabled.json().data.shared_rate_limits).toBe(false);
  });

  it.each([
    ['an unknown key', '{"users.nuke":{"limit":1,"window_s":60}}', /RATE_LIMITS: Unrecognized key: "users\.nuke"/],
    ['a bad value', '{"users.delete":{"limit":0,"window_s":60}}', /RATE_LIMITS\["users\.delete"\]\.limit/],
    ['a missing field', '{"global.anonymous":{"limit":5}}', /RATE_LIMITS\["global\.anonymous"\]\.window_s/],
    ['a non-object', '[1,2]', /RATE_LIMITS: .*expected record/],
  ])('%s in RATE_LIMITS stops the boot with a message naming it', async (_, value, message) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: svc.databaseUrl, RATE_LIMITS: value });
    const boot = createService(config, createLogger('silent'), { database: svc.db });
    await expect(boot).rejects.toThrow(ConfigError);
    await expect(boot).rejects.toThrow(message);
  });
});

describe('client IP is the socket address', () => {
  const tight = JSON.stringify({ 'auth.login': { limit: 1, window_s: 60 } });
  let svc: TestService;
  let proxied: TestService;
  let ceo: TestUser;
  beforeAll(async () => {
    svc = await startTestService({ env: { RATE_LIMITS: tight } });
    ceo = await createUser(svc, { role: 'ceo', password: PASSWORD });
    proxied = await startTestService({ databaseUrl: svc.databaseUrl, env: { RATE_LIMITS: tight, TRUST_PROXY: '1', RATE_LIMIT_STORE: 'memory' } });
  });
  afterAll(async () => {
    await proxied.close();
    await svc.close();
  });

  it('a spoofed X-Forwarded-For does not reset a limit without TRUST_PROXY', async () => {
    expect((await login(svc, ceo, '10.5.0.1')).statusCode).toBe(200);
    const spoofed = await login(svc, ceo, '10.5.0.1', { headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(spoofed.statusCode).toBe(429);
  });

  it('with TRUST_PROXY=1 (one proxy hop) the forwarded client address is the subject', async () => {
    const via = (client: string) => login(proxied, ceo, '10.5.0.2', { headers: { 'x-forwarded-for': client } });
    expect((await via('203.0.113.8')).statusCode).toBe(200);
    expect((await via('203.0.113.8')).statusCode).toBe(429);
    expect((await via('203.0.113.9')).statusCode).toBe(200);
  });
});
