import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createContextInner, recordingSink } from '../src/context/index.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { createLogger } from '../src/logger.ts';
import { createCaller } from '../src/routers/index.ts';
import { createService, type Service } from '../src/service.ts';
import { createTestDatabase } from './helpers/database.ts';
import { createUser } from './helpers/users.ts';
import type { TestService } from './helpers/service.ts';

/** Every line the service logs, kept in memory. */
const lines: string[] = [];
const sink = { write: (line: string) => void lines.push(line) };
const logged = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

let db: Database;
let service: Service;
let svc: TestService;
beforeAll(async () => {
  const config = loadConfig({ DATABASE_URL: await createTestDatabase(), PUBLIC_URL: 'http://agent-org.test', LOG_LEVEL: 'trace', RATE_LIMITS_ENABLED: 'false' });
  db = await openDatabase(config, { debug: () => {}, info: () => {}, warn: () => {} });
  // The most verbose level, so nothing a quieter level would hide escapes the check.
  service = await createService(config, createLogger('trace', sink), { database: db });
  svc = {
    ...service,
    databaseUrl: db.url,
    caller: (credentials, opts) => createCaller(createContextInner({ deps: service.deps, credentials, response: recordingSink(), ip: opts?.ip ?? '127.0.0.1' })),
  };
});
afterAll(async () => {
  await service.close();
  await db.close();
});
beforeEach(() => {
  lines.length = 0;
});

const SECRET_TOKEN = 'AAAAsecretTOKENvalue0123456789abcdefBBBB';
const SECRET_CSRF = 'CCCCsecretCSRFvalue0123456789abcdefDDDD';
const SECRET_PASSWORD = 'correct horse battery staple 42';

describe('request logs never carry credentials or passwords', () => {
  it('Authorization, cookies and X-CSRF-Token stay out of the log', async () => {
    await svc.app.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: {
        authorization: `Bearer ${SECRET_TOKEN}`,
        cookie: `session=${SECRET_TOKEN}; csrf_token=${SECRET_CSRF}; refresh_token=${SECRET_TOKEN}`,
        'x-csrf-token': SECRET_CSRF,
      },
    });
    await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: { authorization: `Bearer ${SECRET_TOKEN}`, cookie: `session=${SECRET_TOKEN}` } });
    expect(lines.length).toBeGreaterThan(0);
    const text = lines.join('');
    expect(text).not.toContain(SECRET_TOKEN);
    expect(text).not.toContain(SECRET_CSRF);
  });

  it('a JSON body with a password stays out of the log, on failure and on success', async () => {
    const user = await createUser(svc, { role: 'ceo', password: SECRET_PASSWORD });
    lines.length = 0;
    const wrong = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: `${SECRET_PASSWORD}!` } });
    const right = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: SECRET_PASSWORD } });
    const malformed = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: `{"password": "${SECRET_PASSWORD}"` });
    const change = await svc.app.inject({
      method: 'POST',
      url: '/api/v1/auth/change-password',
      headers: user.headers,
      payload: { current_password: SECRET_PASSWORD, new_password: `${SECRET_PASSWORD} but new` },
    });
    // Each request did what it was sent for, so every path (refusal, success, parser error) was logged.
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error_detail.error_code).toBe(1000);
    expect(right.statusCode).toBe(200);
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error_detail.error_code).toBe(2001);
    expect(change.statusCode).toBe(200);
    expect(logged().filter((line) => line.msg === 'request completed').map((line) => line.status)).toEqual([401, 200, 400, 200]);
    const text = lines.join('');
    expect(text).not.toContain(SECRET_PASSWORD);
    // Tokens issued by the login and by the password change travel in Set-Cookie only, never into the log.
    for (const res of [right, change]) {
      const issued = Object.fromEntries(res.cookies.map((c) => [c.name, c.value]));
      expect(Object.keys(issued).sort()).toEqual(['csrf_token', 'refresh_token', 'session']);
      for (const value of Object.values(issued)) {
        expect(value).toMatch(/^[A-Za-z0-9_-]{27,}$/);
        expect(text).not.toContain(value);
      }
    }
  });

  it('the logger itself censors those fields wherever a log call puts them', () => {
    lines.length = 0;
    const logger = createLogger('info', sink);
    logger.info(
      {
        req: { headers: { authorization: `Bearer ${SECRET_TOKEN}`, cookie: `session=${SECRET_TOKEN}`, 'x-csrf-token': SECRET_CSRF } },
        res: { headers: { 'set-cookie': `session=${SECRET_TOKEN}` } },
        headers: { authorization: SECRET_TOKEN, cookie: SECRET_TOKEN },
        password: SECRET_PASSWORD,
        body: { password: SECRET_PASSWORD, current_password: SECRET_PASSWORD, new_password: SECRET_PASSWORD },
        input: { password: SECRET_PASSWORD },
      },
      'with secrets',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(SECRET_TOKEN);
    expect(lines[0]).not.toContain(SECRET_CSRF);
    expect(lines[0]).not.toContain(SECRET_PASSWORD);
    expect(logged()[0]).toMatchObject({ password: '[redacted]', body: { password: '[redacted]' }, req: { headers: { authorization: '[redacted]' } } });
  });
});

describe('access log', () => {
  it('writes one line per completed request with reqId, method, route, status, duration and user id', async () => {
    const user = await createUser(svc);
    lines.length = 0;
    await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities?x=1', headers: { ...user.headers, 'x-request-id': 'log-test-1' } });
    await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: { 'x-request-id': 'log-test-2' } });

    const completed = logged().filter((line) => line.msg === 'request completed');
    const first = completed.filter((line) => line.reqId === 'log-test-1');
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ level: 30, method: 'GET', route: '/api/v1/capabilities', status: 200, duration_ms: expect.any(Number), user_id: user.id });
    const second = completed.filter((line) => line.reqId === 'log-test-2');
    expect(second).toHaveLength(1);
    expect(second[0]).toMatchObject({ method: 'GET', route: '/api/v1/capabilities', status: 401, user_id: null });
  });

  it('logs unknown routes too, naming the path without its query string', async () => {
    await svc.app.inject({ method: 'GET', url: '/api/v1/nope/123?token=x', headers: { 'x-request-id': 'log-test-3' } });
    const line = logged().filter((l) => l.reqId === 'log-test-3' && l.msg === 'request completed');
    expect(line).toHaveLength(1);
    expect(line[0]).toMatchObject({ method: 'GET', route: '/api/v1/nope/123', status: 404 });
  });

  it('logs probes at debug level only', async () => {
    await svc.app.inject({ method: 'GET', url: '/api/v1/healthz', headers: { 'x-request-id': 'log-test-4' } });
    const probe = logged().filter((l) => l.reqId === 'log-test-4' && l.msg === 'request completed');
    expect(probe).toHaveLength(1);
    expect(probe[0]).toMatchObject({ level: 20, status: 200 });
  });
});
