import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../src/routers/index.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';

let svc: TestService;
let url: string;
beforeAll(async () => {
  svc = await startTestService();
  const address = await svc.app.listen({ port: 0, host: '127.0.0.1' });
  url = `${address}/api/trpc`;
});
afterAll(() => svc.close());

const client = (headers: Record<string, string> = {}) => createTRPCClient<AppRouter>({ links: [httpLink({ url, headers })] });

// tRPC's documented way to type a client error by its router.
function isAppError(cause: unknown): cause is TRPCClientError<AppRouter> {
  return cause instanceof TRPCClientError;
}

async function failure(promise: Promise<unknown>): Promise<TRPCClientError<AppRouter>> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}

describe('the dashboard API at /api/trpc (@trpc/client over real HTTP)', () => {
  it('probes.healthz answers the bare data', async () => {
    expect(await client().probes.healthz.query()).toEqual({ status: 'ok', version: '0.9.0', uptime_seconds: expect.any(Number) });
  });

  it('probes.capabilities works with a bearer token', async () => {
    const user = await createUser(svc);
    expect(await client(user.headers).probes.capabilities.query()).toMatchObject({ refresh_tokens: true, docs: true });
  });

  it('an unauthenticated probes.capabilities fails with the full ProblemDetail in error.data.problem (1000)', async () => {
    const error = await failure(client({ 'x-request-id': 'trpc-test-1' }).probes.capabilities.query());
    expect(error.data?.httpStatus).toBe(401);
    expect(error.data?.code).toBe('UNAUTHORIZED');
    expect(error.data?.problem).toEqual({
      type: 'http://agent-org.test/docs/errors#auth',
      title: 'Authentication Error',
      status: 401,
      detail: expect.any(String),
      instance: 'trpc-test-1',
      error_code: 1000,
      error_category: 'auth',
      retryable: false,
      retry_after: null,
    });
    expect(error.message).toBe(error.data?.problem.detail);
  });

  it('an unknown procedure fails with a ProblemDetail too (404/3002)', async () => {
    const res = await fetch(`${url}/probes.nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { data: { problem: { error_code: 3002, status: 404 } } } });
  });

  it('a query called as a mutation fails with 405/2001 in the same shape', async () => {
    const res = await fetch(`${url}/probes.healthz`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(405);
    expect(await res.json()).toMatchObject({ error: { data: { problem: { error_code: 2001, status: 405, error_category: 'validation' } } } });
  });
});

describe('sessions through /api/trpc', () => {
  it('auth.setup sets the three cookies, and a cookie-authenticated mutation needs the CSRF header', async () => {
    const res = await fetch(`${url}/auth.setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'trpc-ceo', password: 'a long enough password' }),
    });
    expect(res.status).toBe(200);
    const cookies = Object.fromEntries(
      res.headers.getSetCookie().map((c): [string, string] => {
        const pair = c.split(';')[0] ?? '';
        return [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      }),
    );
    expect(Object.keys(cookies).sort()).toEqual(['csrf_token', 'refresh_token', 'session']);

    const cookieHeader = `session=${cookies.session}; csrf_token=${cookies.csrf_token}`;
    const withoutCsrf = await failure(client({ cookie: cookieHeader }).auth.wsTicket.mutate());
    expect(withoutCsrf.data?.problem).toMatchObject({ error_code: 1001, status: 403 });
    const ticket = await client({ cookie: cookieHeader, 'x-csrf-token': cookies.csrf_token ?? '' }).auth.wsTicket.mutate();
    expect(ticket).toMatchObject({ ticket: expect.any(String), expires_in: 30 });
  });
});
