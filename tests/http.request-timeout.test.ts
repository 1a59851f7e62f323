// CONTRACT §2.4 (rev. 2): a request whose headers or body do not arrive within REQUEST_TIMEOUT_S is cut with 408 in our shape.
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.ts';

let svc: TestService;
let port: number;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', REQUEST_TIMEOUT_S: '1' } });
  await svc.app.listen({ port: 0, host: '127.0.0.1' });
  const address = svc.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(async () => {
  await svc.close();
});

/** Writes `head`, then one byte of `slow` every 200 ms until the server answers or closes; returns what it sent back. */
async function trickle(head: string, slow: string): Promise<{ text: string; elapsedMs: number }> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  // The server may reset while a byte is on its way; 'close' follows 'error', so wait for that (events.once would reject).
  socket.on('error', () => {});
  const closed = new Promise((resolve) => socket.once('close', resolve));
  const started = Date.now();
  socket.write(head);
  let i = 0;
  const timer = setInterval(() => {
    // Once the answer has begun there is nothing more to learn from writing into a connection being closed.
    if (!socket.destroyed && text === '' && i < slow.length) socket.write(slow[i++] ?? '');
  }, 200);
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  clearInterval(timer);
  socket.destroy();
  return { text, elapsedMs: Date.now() - started };
}

function expect408(text: string) {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  expect(head, text).toMatch(/^HTTP\/1\.1 408 /);
  expect(head.toLowerCase()).toMatch(/\r\nx-request-id: [0-9a-f-]{36}/);
  expect(head.toLowerCase()).toContain('x-content-type-options: nosniff');
  expect(JSON.parse(body)).toMatchObject({ success: false, error_detail: { error_code: 2001, error_category: 'validation' } });
}

describe('REQUEST_TIMEOUT_S', () => {
  it('cuts a body that trickles in a byte at a time with 408 in our shape', async () => {
    const body = JSON.stringify({ username: 'someone', password: 'not the password at all' });
    const { text, elapsedMs } = await trickle(
      `POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    expect408(text);
    expect(elapsedMs).toBeLessThan(4000);
  });

  it('cuts headers that never finish with 408 in our shape', async () => {
    const { text, elapsedMs } = await trickle('GET /api/v1/healthz HTTP/1.1\r\nHost: x\r\n', 'X-Slow: ' + 'a'.repeat(100));
    expect408(text);
    expect(elapsedMs).toBeLessThan(4000);
  });

  it('leaves requests that arrive in time alone', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/healthz`);
    expect(res.status).toBe(200);
  });
});
