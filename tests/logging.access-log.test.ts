// The access log (CONTRACT §2.4): every completed non-probe request writes exactly one line under its request id, also those refused before routing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_URL_LENGTH } from '../src/plugins/errorHandlers.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

type Line = Record<string, unknown>;
const lines: Line[] = [];
let svc: TestService;
let user: TestUser;
beforeAll(async () => {
  svc = await startTestService({
    env: { LOG_LEVEL: 'info', RATE_LIMITS_ENABLED: 'false' },
    logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) },
  });
  user = await createUser(svc, { role: 'manager' });
});
afterAll(() => svc.close());

let counter = 0;

/** Sends the request under a request id of its own and returns its access-log lines. */
async function accessLines(method: 'GET' | 'POST' | 'DELETE' | 'PATCH', url: string, opts: { auth?: boolean; payload?: string } = {}) {
  const id = `access-${++counter}`;
  const headers: Record<string, string> = { 'x-request-id': id, ...(opts.auth === false ? {} : user.headers) };
  if (opts.payload !== undefined) headers['content-type'] = 'application/json';
  const res = await svc.app.inject({ method, url, headers, ...(opts.payload === undefined ? {} : { payload: opts.payload }) });
  expect(res.headers['x-request-id']).toBe(id);
  return { res, logged: lines.filter((line) => line.reqId === id && line.msg === 'request completed') };
}

describe('one access-log line per completed request, with its reqId, method, route, status, duration and user', () => {
  it.each([
    ['a served request', 'GET', '/api/v1/auth/me', 200],
    ['an unknown route', 'GET', '/api/v1/nowhere', 404],
    ['a wrong method', 'PATCH', '/api/v1/auth/me', 405],
    ['an undecodable path (%FF)', 'GET', '/api/v1/users/%FF', 400],
    ['an undecodable path (a lone surrogate)', 'DELETE', '/api/v1/auth/sessions/%ED%A0%80', 400],
    ['an undecodable query value', 'GET', '/api/v1/approvals?action_type=%FF', 400],
    ['a request target too long for the router', 'GET', `/api/trpc/${'a'.repeat(MAX_URL_LENGTH + 1)}`, 414],
    ['a request target too long', 'GET', `/api/v1/approvals?pad=${'a'.repeat(MAX_URL_LENGTH)}`, 414],
  ] as const)('%s', async (_name, method, url, status) => {
    const { res, logged } = await accessLines(method, url);
    expect(res.statusCode, res.body).toBe(status);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 30, method, status, route: expect.any(String), duration_ms: expect.any(Number) });
    expect(logged[0]).toHaveProperty('user_id');
  });

  it('a body that cannot be parsed', async () => {
    const { res, logged } = await accessLines('POST', '/api/v1/approvals', { payload: '{"title":' });
    expect(res.statusCode).toBe(400);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ status: 400, method: 'POST' });
  });

  it('names the signed-in user on an authenticated request', async () => {
    const { logged } = await accessLines('GET', '/api/v1/auth/me');
    expect(logged[0]).toMatchObject({ user_id: user.id, route: '/api/v1/auth/me' });
  });

  it('probes write none at info level', async () => {
    const { res, logged } = await accessLines('GET', '/api/v1/healthz', { auth: false });
    expect(res.statusCode).toBe(200);
    expect(logged).toHaveLength(0);
  });
});
