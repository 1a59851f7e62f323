import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../package.json' with { type: 'json' };
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

describe('GET /api/v1/healthz', () => {
  it('answers 200 with status ok, the service version and uptime', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { status: 'ok', version: '0.9.0', uptime_seconds: expect.any(Number) }, error: null, error_detail: null, success: true });
  });

  it('reports the version of package.json, which is also the OpenAPI info.version (probes.healthz)', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<{ info: { version: string } }>();
    const health = await svc.caller().probes.healthz();
    expect(health.version).toBe(packageJson.version);
    expect(health.version).toBe(doc.info.version);
  });
});

describe('GET /api/v1/readyz', () => {
  it('answers 200 with persistence true and the service version when the database answers', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ status: 'ok', version: '0.9.0', persistence: true, uptime_seconds: expect.any(Number) });
    expect(await svc.caller().probes.readyz()).toMatchObject({ version: '0.9.0', persistence: true });
  });
});

describe('GET /api/v1/capabilities', () => {
  it('needs authentication (401/1000)', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities' });
    expect(res.statusCode).toBe(401);
    expect(res.json().error_detail).toMatchObject({ error_code: 1000, error_category: 'auth' });
  });

  it('reports one boolean per optional subsystem to a signed-in user', async () => {
    const user = await createUser(svc);
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: user.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ events: true, refresh_tokens: true, shared_rate_limits: expect.any(Boolean), metrics: true, docs: true, dashboard: true, api_keys: true, mfa: true, webhooks: true, audit: true });
    expect(await user.caller.probes.capabilities()).toMatchObject({ refresh_tokens: true });
  });
});
