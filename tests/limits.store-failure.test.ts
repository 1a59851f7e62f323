// When the limiter's PostgreSQL store fails: mutations fail closed (503/8001), reads go on without limits.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RATE_LIMIT_TABLE_NAME } from '../src/limits/stores.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const PASSWORD = 'correct horse battery staple';

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  svc = await startTestService();
  ceo = await createUser(svc, { role: 'ceo', password: PASSWORD });
});
afterAll(() => svc.close());

// Moving the table away makes every store query fail the way an unreachable database does, for this
// database only: the test server is shared with other test files.
const breakStore = () => svc.db.orm.em.getConnection().execute(`alter table "${RATE_LIMIT_TABLE_NAME}" rename to "${RATE_LIMIT_TABLE_NAME}_away"`);
const repairStore = () => svc.db.orm.em.getConnection().execute(`alter table if exists "${RATE_LIMIT_TABLE_NAME}_away" rename to "${RATE_LIMIT_TABLE_NAME}"`);

beforeEach(async () => {
  await repairStore();
});

describe('store failure on a mutation', () => {
  it('answers 503/8001 with a generic detail and Retry-After instead of letting the call through', async () => {
    await breakStore();
    const res = await svc.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { accept: 'application/problem+json' },
      payload: { username: ceo.username, password: PASSWORD },
    });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toMatchObject({
      status: 503,
      error_code: 8001,
      error_category: 'internal',
      retryable: true,
      retry_after: 5,
      detail: 'A required service is unavailable. Retry later.',
    });
    expect(JSON.stringify(res.json())).not.toMatch(/rate_limit_counters|relation/);
  });

  it('recovers by itself once the store is back', async () => {
    await breakStore();
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: ceo.username, password: PASSWORD } })).statusCode).toBe(503);
    await repairStore();
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: ceo.username, password: PASSWORD } })).statusCode).toBe(200);
  });
});

describe('store failure on a read', () => {
  it('serves a read with an operation limit, without RateLimit-* headers', async () => {
    await breakStore();
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', headers: ceo.headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-limit']).toBeUndefined();
  });

  it('serves a read under the global limit only', async () => {
    await breakStore();
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: ceo.headers });
    expect(res.statusCode).toBe(200);
  });
});
