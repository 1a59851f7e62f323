import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';

const TOKEN = 'scrape-token-0123456789abcdef';

let svc: TestService;
let guarded: TestService;
let off: TestService;
let throttleOnly: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS: JSON.stringify({ 'auth.sessions_list': { limit: 1, window_s: 60 } }) } });
  [guarded, off, throttleOnly] = await Promise.all([
    startTestService({ databaseUrl: svc.databaseUrl, env: { METRICS_TOKEN: TOKEN } }),
    startTestService({ databaseUrl: svc.databaseUrl, env: { METRICS_ENABLED: 'false' } }),
    startTestService({ databaseUrl: svc.databaseUrl, env: { RATE_LIMITS_ENABLED: 'false' } }),
  ]);
  // Sign-ins need first-run setup done, which the CEO's existence is.
  await createUser(svc, { role: 'ceo' });
});
afterAll(() => Promise.all([svc.close(), guarded.close(), off.close(), throttleOnly.close()]));

async function scrape(service: TestService = svc): Promise<string> {
  const res = await service.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  return res.body;
}

/** The value of one series, 0 when it does not exist yet; `labels` is the exact label set as printed. */
function sample(text: string, name: string, labels = ''): number {
  const prefix = labels === '' ? `${name} ` : `${name}{${labels}} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? 0 : Number(line.slice(prefix.length));
}

describe('GET /metrics', () => {
  it('serves the Prometheus text format with the process defaults and the database pool gauges', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(res.body).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    for (const gauge of ['agent_org_db_pool_size', 'agent_org_db_pool_idle', 'agent_org_db_pool_waiting']) {
      expect(res.body).toMatch(new RegExp(`^${gauge} \\d+$`, 'm'));
    }
    // The test service has queried the database, so its pool has at least one connection.
    expect(sample(res.body, 'agent_org_db_pool_size')).toBeGreaterThan(0);
  });

  it('counts requests and their duration by operation (procedure path), method and status', async () => {
    const user = await createUser(svc);
    const before = await scrape();
    const labels = 'operation="auth.me",method="GET",status="200"';
    for (let i = 0; i < 3; i++) expect((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers })).statusCode).toBe(200);
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me' })).statusCode).toBe(401);
    const after = await scrape();
    expect(sample(after, 'agent_org_http_requests_total', labels) - sample(before, 'agent_org_http_requests_total', labels)).toBe(3);
    expect(
      sample(after, 'agent_org_http_requests_total', 'operation="auth.me",method="GET",status="401"') -
        sample(before, 'agent_org_http_requests_total', 'operation="auth.me",method="GET",status="401"'),
    ).toBe(1);
    expect(sample(after, 'agent_org_http_request_duration_seconds_count', labels) - sample(before, 'agent_org_http_request_duration_seconds_count', labels)).toBe(3);
    expect(after).toContain(`agent_org_http_request_duration_seconds_bucket{le="+Inf",${labels}}`);
  });

  it('labels tRPC calls by procedure, and paths that name no procedure by one fixed value', async () => {
    const before = await scrape();
    await svc.app.inject({ method: 'GET', url: '/api/trpc/probes.healthz' });
    await svc.app.inject({ method: 'GET', url: '/api/trpc/made.up.name' });
    // Outside /api a path without a file extension is the dashboard's (history-API fallback), so the unmatched one is under /api.
    await svc.app.inject({ method: 'GET', url: '/api/no/such/path' });
    const after = await scrape();
    const delta = (labels: string) => sample(after, 'agent_org_http_requests_total', labels) - sample(before, 'agent_org_http_requests_total', labels);
    expect(delta('operation="probes.healthz",method="GET",status="200"')).toBe(1);
    expect(delta('operation="trpc.unknown",method="GET",status="404"')).toBe(1);
    expect(delta('operation="unmatched",method="GET",status="404"')).toBe(1);
    expect(after).not.toContain('made.up.name');
    expect(after).not.toContain('/api/no/such/path');
  });

  it('counts rate-limit refusals by code and operation', async () => {
    const user = await createUser(svc);
    const labels = 'code="5001",operation="auth.listSessions"';
    const before = await scrape();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', headers: user.headers })).statusCode);
    expect(statuses).toEqual([200, 429, 429]);
    const after = await scrape();
    expect(sample(after, 'agent_org_rate_limited_total', labels) - sample(before, 'agent_org_rate_limited_total', labels)).toBe(2);
  });

  it("counts the limiter's refusals over /api/trpc once each, by procedure", async () => {
    const user = await createUser(svc);
    const labels = 'code="5001",operation="auth.listSessions"';
    const before = await scrape();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await svc.app.inject({ method: 'GET', url: `/api/trpc/auth.listSessions?input=${encodeURIComponent('{}')}`, headers: user.headers })).statusCode);
    expect(statuses).toEqual([200, 429, 429]);
    const after = await scrape();
    expect(sample(after, 'agent_org_rate_limited_total', labels) - sample(before, 'agent_org_rate_limited_total', labels)).toBe(2);
  });

  it.each([
    ['REST', '/api/v1/auth/login'],
    ['tRPC', '/api/trpc/auth.login'],
  ])("counts the login throttle's refusals (the 11th failed sign-in → 429/5001) as 5001 of auth.login (%s)", async (_transport, url) => {
    // The throttle stays on without the other limits, so the per-operation window cannot be what refuses.
    const user = await createUser(throttleOnly, { role: 'manager' });
    const labels = 'code="5001",operation="auth.login"';
    const before = await scrape(throttleOnly);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      statuses.push((await throttleOnly.app.inject({ method: 'POST', url, payload: { username: user.username, password: 'not-the-password-at-all' } })).statusCode);
    }
    expect(statuses).toEqual([...Array<number>(10).fill(401), 429, 429]);
    const after = await scrape(throttleOnly);
    expect(sample(after, 'agent_org_rate_limited_total', labels) - sample(before, 'agent_org_rate_limited_total', labels)).toBe(2);
  });

  it('counts failed sign-ins', async () => {
    const user = await createUser(svc);
    const before = sample(await scrape(), 'agent_org_login_failures_total');
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: 'not-the-password-at-all' } });
    expect(res.statusCode).toBe(401);
    const ok = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: user.password } });
    expect(ok.statusCode).toBe(200);
    expect(sample(await scrape(), 'agent_org_login_failures_total') - before).toBe(1);
  });

  it('exposes the event-stream instruments the events subsystem updates', async () => {
    const before = await scrape();
    svc.deps.metrics.eventStreams.inc();
    svc.deps.metrics.eventsDelivered.inc(5);
    svc.deps.metrics.eventsDropped.inc();
    const after = await scrape();
    expect(sample(after, 'agent_org_event_streams_open') - sample(before, 'agent_org_event_streams_open')).toBe(1);
    expect(sample(after, 'agent_org_events_delivered_total') - sample(before, 'agent_org_events_delivered_total')).toBe(5);
    expect(sample(after, 'agent_org_events_dropped_total') - sample(before, 'agent_org_events_dropped_total')).toBe(1);
    svc.deps.metrics.eventStreams.dec();
  });

  it('is outside /api/v1, absent from the OpenAPI document and exempt from rate limits', async () => {
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/metrics' })).statusCode).toBe(404);
    const doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(doc.paths).filter((p) => p.includes('metrics'))).toEqual([]);
    // Far beyond the anonymous budget of 120 per minute.
    for (let i = 0; i < 130; i++) {
      const res = await svc.app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('METRICS_TOKEN', () => {
  it('answers 401/1000 in the error envelope without the token, or with a wrong one', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const res = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.json()).toMatchObject({ data: null, success: false, error_detail: { error_code: 1000, error_category: 'auth' } });
      expect(res.body).not.toContain('process_cpu');
    }
  });

  it('answers a ProblemDetail when asked for one', async () => {
    const res = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: { ...PROBLEM, authorization: 'Bearer nope-nope-nope-nope' } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
  });

  it('serves the metrics with the right bearer token', async () => {
    const res = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('agent_org_http_requests_total');
  });
});

describe('METRICS_ENABLED', () => {
  it('true (the default): capabilities.metrics is true', async () => {
    const user = await createUser(svc);
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: user.headers });
    expect(res.json().data.metrics).toBe(true);
  });

  it('false: no /metrics route (404) and capabilities.metrics is false', async () => {
    const res = await off.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error_detail).toMatchObject({ error_code: 3002 });
    const user = await createUser(off);
    const caps = await off.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: user.headers });
    expect(caps.json().data.metrics).toBe(false);
  });
});
