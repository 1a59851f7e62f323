import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/net/freePort.ts';
import { createTestDatabase } from './helpers/database.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const nodeBin = path.join(root, 'node_modules', '.bin', 'node');

let child: ChildProcess;
let port: number;
let output = '';
let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

function get(pathname: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathname, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

async function waitUntilReady(deadlineMs: number): Promise<void> {
  const started = Date.now();
  for (;;) {
    const status = await get('/api/v1/readyz').catch(() => 0);
    if (status === 200) return;
    if (Date.now() - started > deadlineMs) throw new Error(`the service did not become ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  const databaseUrl = await createTestDatabase();
  port = await freePort();
  child = spawn(nodeBin, ['src/main.ts'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMITS_ENABLED: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await waitUntilReady(20_000);
}, 30_000);

afterAll(() => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

describe('SIGTERM', () => {
  it('lets an in-flight request finish, refuses new connections, and exits 0', async () => {
    // A request whose body is still arriving when the signal comes.
    const inFlight = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/v1/auth/login',
      agent: false,
      // 100-continue: the server answers it once it has parsed the headers, so the test knows the
      // request is in flight (not still in the accept queue) before it sends the signal.
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', expect: '100-continue' },
    });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      inFlight.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      inFlight.on('error', reject);
    });
    const accepted = once(inFlight, 'continue');
    inFlight.flushHeaders();
    await accepted;
    inFlight.write('{"username": "someone", ');
    await new Promise((resolve) => setTimeout(resolve, 100));

    child.kill('SIGTERM');

    // New connections are refused while the old request is still open.
    const started = Date.now();
    let refused = false;
    while (!refused && Date.now() - started < 5000) {
      refused = await get('/api/v1/healthz').then(
        () => false,
        (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED',
      );
      if (!refused) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(refused, output).toBe(true);
    expect(child.exitCode, 'the process waits for the in-flight request').toBeNull();

    inFlight.end('"password": "not-the-password"}');
    const { status, body } = await response;
    // A complete answer from the operation itself (not a 503 "closing" nor a reset connection).
    expect(status).toBeGreaterThanOrEqual(200);
    expect(status).toBeLessThan(500);
    expect(JSON.parse(body)).toHaveProperty('success');

    expect(await exited, output).toEqual({ code: 0, signal: null });
  });
});
