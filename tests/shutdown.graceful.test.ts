// CONTRACT §2.4: SIGTERM stops accepting, lets in-flight requests finish (bounded), and exits 0, also with slow or idle clients connected.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../src/net/freePort.ts';
import { DRAIN_TIMEOUT_MS } from '../src/plugins/shutdown.ts';
import { createTestDatabase } from './helpers/database.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const nodeBin = path.join(root, 'node_modules', '.bin', 'node');

type Running = { child: ChildProcess; port: number; output: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> };
const started: ChildProcess[] = [];

afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function get(port: number, pathname: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathname, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

/** The real src/main.ts in a child process, on a database of its own, once it answers readyz. */
async function startMain(env: Record<string, string> = {}): Promise<Running> {
  const databaseUrl = await createTestDatabase();
  const port = await freePort();
  const child = spawn(nodeBin, ['src/main.ts'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMITS_ENABLED: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const since = Date.now();
  while ((await get(port, '/api/v1/readyz').catch(() => 0)) !== 200) {
    if (Date.now() - since > 20_000) throw new Error(`the service did not become ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, port, output: () => output, exited };
}

async function refusesConnections(port: number): Promise<boolean> {
  const since = Date.now();
  while (Date.now() - since < 5000) {
    const refused = await get(port, '/api/v1/healthz').then(
      () => false,
      (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED',
    );
    if (refused) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

describe('SIGTERM', () => {
  it('lets an in-flight request finish, refuses new connections, and exits 0', async () => {
    const { child, port, output, exited } = await startMain();
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
    expect(await refusesConnections(port), output()).toBe(true);
    expect(child.exitCode, 'the process waits for the in-flight request').toBeNull();

    inFlight.end('"password": "not-the-password"}');
    const { status, body } = await response;
    // A complete answer from the operation itself (not a 503 "closing" nor a reset connection).
    expect(status).toBeGreaterThanOrEqual(200);
    expect(status).toBeLessThan(500);
    expect(JSON.parse(body)).toHaveProperty('success');

    expect(await exited, output()).toEqual({ code: 0, signal: null });
  });

  it('with a client trickling a body and an idle keep-alive client connected, still exits 0 within the drain bound', { timeout: 60_000 }, async () => {
    // REQUEST_TIMEOUT_S far beyond the drain bound: here only the shutdown may cut the slow client.
    const { child, port, output, exited } = await startMain({ REQUEST_TIMEOUT_S: '300' });
    const slow = net.connect(port, '127.0.0.1');
    slow.on('error', () => {});
    await once(slow, 'connect');
    slow.write('POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
    const trickle = setInterval(() => {
      if (!slow.destroyed) slow.write(' ', () => {});
    }, 200);
    const idle = net.connect(port, '127.0.0.1');
    idle.on('error', () => {});
    await once(idle, 'connect');
    idle.write('GET /api/v1/healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await once(idle, 'data'); // answered; the connection stays open (keep-alive)
    try {
      const signalled = Date.now();
      child.kill('SIGTERM');
      const result = await exited;
      expect(result, output()).toEqual({ code: 0, signal: null });
      expect(Date.now() - signalled).toBeLessThan(DRAIN_TIMEOUT_MS + 5000);
      expect(slow.destroyed || slow.readableEnded).toBe(true);
    } finally {
      clearInterval(trickle);
      slow.destroy();
      idle.destroy();
    }
  });
});

describe('SIGTERM with a request waiting for a decision (CONTRACT §4.11)', () => {
  it('answers it at once with the approval still pending, stops the job queue, and exits 0 well inside the drain bound', async () => {
    const { child, port, output, exited } = await startMain();
    const base = `http://127.0.0.1:${String(port)}/api/v1`;
    const setup = await fetch(`${base}/auth/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'chief', password: 'correct horse battery staple' }),
    });
    expect(setup.status).toBe(201);
    const cookies = new Map(setup.headers.getSetCookie().map((c) => c.split(';')[0]?.split('=') ?? []).map(([k, v]) => [k ?? '', v ?? '']));
    const headers = { cookie: `session=${cookies.get('session') ?? ''}; csrf_token=${cookies.get('csrf_token') ?? ''}`, 'x-csrf-token': cookies.get('csrf_token') ?? '' };
    const created = await fetch(`${base}/approvals`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ action_type: 'deploy:production', title: 'Ship', description: 'Release', risk_level: 'low' }),
    });
    expect(created.status).toBe(201);
    const { id } = ((await created.json()) as { data: { id: string } }).data;

    const waiting = fetch(`${base}/approvals/${id}?wait_s=60`, { headers });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const signalled = Date.now();
    child.kill('SIGTERM');
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { data: { status: string } }).data.status).toBe('pending');
    expect(Date.now() - signalled).toBeLessThan(3000);

    expect(await exited, output()).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(DRAIN_TIMEOUT_MS);
    expect(output()).not.toContain('job queue error');
  });
});
