// The typed client factory (src/client, CONTRACT §4.7) in Chromium against the real service: batching, CSRF, cookies, idempotency keys, the session refresh.
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeSession } from '../src/services/auth/sessions.ts';
import { launchChromium, newContext, signedInContext, startServedService, type ServedService } from './helpers/browser.ts';
import { issueKey } from './helpers/apiKeys.ts';
import { bundleClientHarness, openClientHarness, type Settled } from './helpers/clientHarness.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: ServedService;
let browser: Browser;
let harnessJs: string;

beforeAll(async () => {
  [svc, browser, harnessJs] = await Promise.all([startServedService(), launchChromium(), bundleClientHarness()]);
  // Login answers 409 until first-run setup is done; a CEO makes it answer as it normally does.
  await createUser(svc, { role: 'ceo' });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await svc?.close();
}, 120_000);

type Opened = { page: Page; calls: Request[] };

/** A page of the service's origin running the harness, signed in as `user`; `calls` are its tRPC requests from then on. */
async function open(user: TestUser): Promise<Opened> {
  const page = await openClientHarness(await signedInContext(browser, svc.origin, user), svc.origin, harnessJs);
  const calls: Request[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/trpc/')) calls.push(r);
  });
  return { page, calls };
}

const run = (page: Page, expression: string) => page.evaluate<Settled>(`harness.settle(${expression})`);

describe('createClient in Chromium', () => {
  it('batches the calls of one tick into one HTTP request', async () => {
    const { page, calls } = await open(await createUser(svc));
    const batch = await page.evaluate<Settled[]>(
      'Promise.all([harness.client.probes.healthz.query(), harness.client.setup.status.query(), harness.client.auth.me.query()].map(harness.settle))',
    );
    expect(batch.map((s) => s.ok)).toEqual([true, true, true]);
    expect(calls).toHaveLength(1);
    const url = new URL(calls[0]!.url());
    expect(url.pathname).toBe('/api/trpc/probes.healthz,setup.status,auth.me');
    expect(url.searchParams.get('batch')).toBe('1');
  });

  it('sends the session cookie with every call and the csrf_token cookie as X-CSRF-Token on mutations only', async () => {
    const user = await createUser(svc);
    const { page, calls } = await open(user);
    expect(await run(page, 'harness.client.auth.me.query()')).toMatchObject({ ok: true, value: { username: user.username } });
    // ws-ticket is a cookie-authenticated mutation: without the header the server refuses it (403/1001).
    expect(await run(page, 'harness.client.auth.wsTicket.mutate()')).toMatchObject({ ok: true, value: { expires_in: 30 } });
    const [query, mutation] = calls;
    expect(query!.headers()['x-csrf-token']).toBeUndefined();
    expect(mutation!.method()).toBe('POST');
    expect(mutation!.headers()['x-csrf-token']).toBe(user.csrfToken);
  });

  it('sends a call with an idempotency key alone, with the Idempotency-Key header', async () => {
    const { page, calls } = await open(await createUser(svc, { role: 'manager' }));
    const input = JSON.stringify({ action_type: 'deploy:production', title: 'Ship it', description: 'Release 1.2', risk_level: 'low' });
    const [created, status] = await page.evaluate<Settled[]>(
      `Promise.all([harness.client.approvals.create.mutate(${input}, harness.withIdempotencyKey('key-123')), harness.client.setup.status.query()].map(harness.settle))`,
    );
    expect(created).toMatchObject({ ok: true });
    expect(status).toMatchObject({ ok: true });
    const create = calls.find((c) => c.url().includes('approvals.create'))!;
    expect(new URL(create.url()).pathname).toBe('/api/trpc/approvals.create');
    expect(new URL(create.url()).searchParams.has('batch')).toBe(false);
    expect(create.headers()['idempotency-key']).toBe('key-123');
    expect(create.headers()['x-csrf-token']).toEqual(expect.any(String));
    expect(calls.find((c) => c.url().includes('setup.status'))!.headers()['idempotency-key']).toBeUndefined();
  });

  it('procedures that return nothing resolve to undefined (revokeSession, logout)', async () => {
    const user = await createUser(svc);
    const { page } = await open(user);
    // Signing in again gives this browser a second session; the first is then revoked from here.
    const login = JSON.stringify({ username: user.username, password: user.password });
    expect(await run(page, `harness.client.auth.login.mutate(${login})`)).toMatchObject({ ok: true });
    expect(await run(page, `harness.client.auth.revokeSession.mutate({ session_id: ${JSON.stringify(user.sessionId)} })`)).toEqual({
      ok: true,
      value: null,
      undefined: true,
    });
    expect(await run(page, 'harness.client.auth.logout.mutate()')).toEqual({ ok: true, value: null, undefined: true });
  });

  it('a revoked session is refreshed once, and when that fails the session is reported lost (401/1002)', async () => {
    const user = await createUser(svc);
    const { page, calls } = await open(user);
    await user.caller.auth.revokeSession({ session_id: user.sessionId });
    expect(await run(page, 'harness.client.auth.me.query()')).toEqual({ ok: false, status: 401, code: 1002 });
    expect(await page.evaluate<number>('harness.sessionsLost()')).toBe(1);
    expect(calls.map((c) => new URL(c.url()).pathname)).toEqual(['/api/trpc/auth.me', '/api/trpc/auth.refresh']);
  });

  it('calls that fail together share one refresh attempt', async () => {
    const user = await createUser(svc);
    const { page, calls } = await open(user);
    await user.caller.auth.revokeSession({ session_id: user.sessionId });
    // Two batches (a query and a mutation) both get 401; one refresh serves both.
    const results = await page.evaluate<Settled[]>('Promise.all([harness.client.auth.me.query(), harness.client.auth.wsTicket.mutate()].map(harness.settle))');
    expect(results.map((r) => r.ok)).toEqual([false, false]);
    expect(calls.filter((c) => c.url().includes('auth.refresh'))).toHaveLength(1);
    expect(await page.evaluate<number>('harness.sessionsLost()')).toBe(1);
  });

  it('login and refresh failures are answers, not lost sessions', async () => {
    const user = await createUser(svc);
    const { page, calls } = await open(user);
    expect(await run(page, `harness.client.auth.login.mutate({ username: ${JSON.stringify(user.username)}, password: 'wrong password!' })`)).toEqual({
      ok: false,
      status: 401,
      code: 1000,
    });
    expect(calls.map((c) => new URL(c.url()).pathname)).toEqual(['/api/trpc/auth.login']);
    expect(await page.evaluate<number>('harness.sessionsLost()')).toBe(0);
  });

  // The refresh_token cookie's path is /api (CONTRACT §3.2 rev. 2), so the browser sends it to /api/trpc too.
  it('auth.refresh over /api/trpc rotates the session', async () => {
    const user = await createUser(svc);
    const { page } = await open(user);
    const refreshed = await run(page, 'harness.client.auth.refresh.mutate()');
    expect(refreshed).toMatchObject({ ok: true, value: { user: { username: user.username } } });
    const cookies = await page.context().cookies(svc.origin);
    expect(cookies.find((c) => c.name === 'session')?.value).not.toBe(user.token);
    expect(await run(page, 'harness.client.auth.me.query()')).toMatchObject({ ok: true });
  });

  it('an expired access token is refreshed once and the call retried', async () => {
    const user = await createUser(svc);
    const { page, calls } = await open(user);
    // The browser drops the access cookie when it expires; the refresh token outlives it.
    await page.context().clearCookies({ name: 'session' });
    expect(await run(page, 'harness.client.auth.me.query()')).toMatchObject({ ok: true, value: { username: user.username } });
    expect(calls.map((c) => new URL(c.url()).pathname)).toEqual(['/api/trpc/auth.me', '/api/trpc/auth.refresh', '/api/trpc/auth.me']);
    expect(await page.evaluate<number>('harness.sessionsLost()')).toBe(0);
  });

  type Feed = { started: number; events: { id: string; type: string; dataId: string | null }[]; errors: { status: number | null; code: number | null }[] };
  const feed = (page: Page) => page.evaluate<Feed>('harness.feed()');

  it('events.subscribe streams tracked events over Server-Sent Events (httpSubscriptionLink, an EventSource with the cookies)', async () => {
    const { page, calls } = await open(await createUser(svc));
    await page.evaluate('harness.follow(["approvals"])');
    await expect.poll(async () => (await feed(page)).started).toBe(1);
    const manager = await createUser(svc, { role: 'manager' });
    const created = await manager.caller.approvals.create({ action_type: 'deploy:live', title: 'Live', description: 'Over SSE', risk_level: 'low' });
    await expect.poll(async () => (await feed(page)).events).toEqual([{ id: expect.stringMatching(/^\d+$/), type: 'approval.created', dataId: created.id }]);
    const stream = calls.find((c) => c.url().includes('events.subscribe'))!;
    expect(stream.resourceType()).toBe('eventsource');
    expect(JSON.parse(new URL(stream.url()).searchParams.get('input') ?? '')).toEqual({ channels: ['approvals'] });
    expect((await feed(page)).errors).toEqual([]);
  });

  it('a subscription refused for want of a session is refreshed once and sent again; a revoked one is reported lost (401/1002)', async () => {
    const user = await createUser(svc);
    const { page, calls } = await open(user);
    // The access cookie expired (the browser dropped it); the refresh token is still good.
    await page.context().clearCookies({ name: 'session' });
    await page.evaluate('harness.follow(["approvals"])');
    await expect.poll(async () => (await feed(page)).started).toBe(2);
    const manager = await createUser(svc, { role: 'manager' });
    const created = await manager.caller.approvals.create({ action_type: 'deploy:live', title: 'After refresh', description: 'Resumed', risk_level: 'low' });
    await expect.poll(async () => (await feed(page)).events.map((e) => e.dataId)).toEqual([created.id]);
    expect(calls.filter((c) => c.url().includes('auth.refresh'))).toHaveLength(1);
    expect(await page.evaluate<number>('harness.sessionsLost()')).toBe(0);
    expect((await feed(page)).errors).toEqual([]);

    // Revoked (the session id survives the refresh): the stream ends with 401/1002, the refresh fails, the loss is reported once.
    await svc.deps.orm.em.fork().transactional((tx) => revokeSession({ em: tx, clock: svc.deps.clock }, user.sessionId, 'revoked', { username: null }));
    await expect.poll(async () => (await feed(page)).errors).toEqual([{ status: 401, code: 1002 }]);
    expect(await page.evaluate<number>('harness.sessionsLost()')).toBe(1);
  });
});

describe('createClient with an API key (CONTRACT §3.5)', () => {
  it('sends it as Authorization: Bearer on queries and mutations, with no session cookie and no CSRF token', async () => {
    const owner = await createUser(svc, { role: 'manager' });
    const key = await issueKey(svc, owner, ['approvals:write']);
    // A browser context without any cookie: only the header can authenticate.
    const page = await openClientHarness(await newContext(browser), svc.origin, harnessJs);
    const calls: Request[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/trpc/')) calls.push(r);
    });
    const keyed = (call: string) => page.evaluate<Settled>(`harness.settle(harness.keyed(${JSON.stringify(key.secret)}).${call})`);
    expect(await keyed('auth.me.query()')).toMatchObject({ ok: true, value: { id: owner.id, api_key: { id: key.id } } });
    expect(await keyed("approvals.create.mutate({ action_type: 'deploy:staging', title: 't', description: 'd', risk_level: 'low' })")).toMatchObject({
      ok: true,
      value: { requested_by: owner.username },
    });
    expect(await keyed("users.create.mutate({ username: 'nope', role: 'observer', kind: 'service' })")).toEqual({ ok: false, status: 403, code: 1001 });
    expect(calls.length).toBeGreaterThanOrEqual(3);
    for (const call of calls) {
      const headers = await call.allHeaders();
      expect(headers.authorization).toBe(`Bearer ${key.secret}`);
      expect(headers.cookie).toBeUndefined();
      expect(headers['x-csrf-token']).toBeUndefined();
    }
  });
});
