// CONTRACT §2.2 (rev. 2): every response of the process has our error shape, also those produced below the router.
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

type RawResponse = { status: number; headers: Record<string, string>; body: string };

/** Sends raw bytes on a fresh connection and reads every response until the server closes it. */
async function raw(port: number, ...chunks: string[]): Promise<RawResponse[]> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = once(socket, 'close');
  for (const chunk of chunks) socket.write(chunk);
  await closed;
  return parseResponses(received);
}

function parseResponses(text: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    const [statusLine = '', ...lines] = rest.slice(0, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    responses.push({ status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(headEnd + 4, headEnd + 4 + length) });
    rest = rest.slice(headEnd + 4 + length);
  }
  return responses;
}

/** Our error envelope with its code, the request id echoed, and the security headers. */
function expectOurError(res: { status: number; headers: Record<string, unknown>; body: string }, status: number, code: number) {
  expect(res.status, res.body).toBe(status);
  const body = JSON.parse(res.body) as { success: boolean; error_detail: { error_code: number; error_category: string; instance: string } };
  expect(body.success).toBe(false);
  expect(body.error_detail.error_code).toBe(code);
  expect(res.headers['x-request-id']).toBe(body.error_detail.instance);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(res.headers['content-security-policy']).toContain("default-src 'none'");
  return body;
}

const injected = (res: { statusCode: number; headers: Record<string, unknown>; body: string }) => ({ status: res.statusCode, headers: res.headers, body: res.body });

let svc: TestService;
let port: number;
let user: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  user = await createUser(svc);
  await svc.app.listen({ port: 0, host: '127.0.0.1' });
  const address = svc.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(async () => {
  await svc.close();
});

describe('requests that never reach the router', () => {
  it('a malformed request line → 400/2001 in our shape', async () => {
    const [res] = await raw(port, 'HELLO WORLD\r\n\r\n');
    const body = expectOurError(res!, 400, 2001);
    expect(body.error_detail.error_category).toBe('validation');
  });

  it('a malformed header → 400/2001 in our shape', async () => {
    const [res] = await raw(port, 'GET /api/v1/healthz HTTP/1.1\r\nHost: x\r\nNot A Header\r\n\r\n');
    expectOurError(res!, 400, 2001);
  });

  it('a header section over 16 KiB → 431 with category validation, code 2001', async () => {
    const [res] = await raw(port, `GET /api/v1/healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const body = expectOurError(res!, 431, 2001);
    expect(body.error_detail.error_category).toBe('validation');
  });
});

describe('URLs', () => {
  it('a request target over 8 KiB → 414 with category validation, code 2001', async () => {
    const res = await svc.app.inject({ method: 'GET', url: `/api/v1/healthz?pad=${'a'.repeat(9000)}` });
    const body = expectOurError(injected(res), 414, 2001);
    expect(body.error_detail.error_category).toBe('validation');
  });

  it.each(['%FF', '%ED%A0%80'])('an undecodable %s in a path → 400/2001 in our shape, in both formats', async (bad) => {
    expectOurError(injected(await svc.app.inject({ method: 'GET', url: `/api/v1/users/${bad}`, headers: user.headers })), 400, 2001);
    const problem = await svc.app.inject({ method: 'GET', url: `/api/v1/users/${bad}`, headers: { ...user.headers, ...PROBLEM } });
    expect(problem.statusCode).toBe(400);
    expect(problem.headers['content-type']).toBe('application/problem+json');
    expect(problem.json()).toMatchObject({ status: 400, error_code: 2001, instance: problem.headers['x-request-id'] });
  });

  it('a tRPC batch of 60 calls (a path far beyond 256 characters) is served', async () => {
    const calls = Array.from({ length: 60 }, () => 'probes.healthz').join(',');
    const res = await svc.app.inject({ method: 'GET', url: `/api/trpc/${calls}?batch=1` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toHaveLength(60);
  });

  it('path params of /api/v1 are still ours to check: 129 characters → 400/2001', async () => {
    const res = await svc.app.inject({ method: 'GET', url: `/api/v1/users/${'a'.repeat(129)}`, headers: user.headers });
    expectOurError(injected(res), 400, 2001);
  });
});

describe('trailing slashes (CONTRACT §2.4)', () => {
  it('are ignored: /api/v1/capabilities/ is /api/v1/capabilities', async () => {
    const plain = await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities', headers: user.headers });
    const slashed = await svc.app.inject({ method: 'GET', url: '/api/v1/capabilities/', headers: user.headers });
    expect(slashed.statusCode, slashed.body).toBe(200);
    expect(slashed.json()).toEqual(plain.json());
  });

  it('also on paths with parameters and on the docs', async () => {
    const res = await svc.app.inject({ method: 'GET', url: `/api/v1/users/${user.id}/`, headers: user.headers });
    expect(res.statusCode, res.body).toBe(200);
    expect((await svc.app.inject({ method: 'GET', url: '/docs/errors/' })).statusCode).toBe(200);
  });
});

describe('a request that arrives while the service shuts down', () => {
  let closing: TestService;
  let closingPort: number;
  beforeAll(async () => {
    closing = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
    await closing.app.listen({ port: 0, host: '127.0.0.1' });
    const address = closing.app.server.address();
    closingPort = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(async () => {
    await closing.close();
  });

  it('gets 503/8001 with retry_after 1 in our shape, while the one in flight completes', async () => {
    const socket = net.connect(closingPort, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const closed = once(socket, 'close');
    // A request whose body is still arriving keeps the connection busy when close begins.
    socket.write('POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closed$ = closing.app.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The rest of its body, and a second request behind it on the same connection.
    socket.write('}GET /api/v1/healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await closed;
    await closed$;
    const [first, second] = parseResponses(received);
    expect(first?.status, received).toBe(400); // the login itself answered (its body is {} → a validation error)
    const body = expectOurError(second!, 503, 8001);
    expect(body.error_detail).toMatchObject({ retryable: true, retry_after: 1 });
    expect(second!.headers['retry-after']).toBe('1');
    expect(second!.headers.connection).toBe('close');
  });
});
