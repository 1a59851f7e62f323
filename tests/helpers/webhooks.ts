// A webhook receiver for tests: an HTTP server on 127.0.0.1 that records what it is sent and answers as told.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { freePort } from '../../src/net/freePort.ts';

export type Received = { headers: IncomingHttpHeaders; body: string; at: number };

/** How the receiver answers one request: a status (with optional headers and body), or not at all. */
export type Answer =
  | { status: number; headers?: Record<string, string>; body?: string }
  | { hang: true }
  | { status: number; endlessBody: true };

export type Receiver = {
  url: string;
  port: number;
  received: Received[];
  /** Answers of the next requests, in order; after them `fallback` (200 by default). */
  answers: Answer[];
  fallback: Answer;
  /** Resolves once `n` requests have arrived (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
};

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const open = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received,
    answers: [],
    fallback: { status: 200 },
    waitFor(n, timeoutMs = 15_000) {
      if (received.length >= n) return Promise.resolve(received.slice(0, n));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${n} requests within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve(received.slice(0, n));
          },
        });
      });
    },
    async close() {
      for (const timer of timers) clearInterval(timer);
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      for (const w of [...waiters]) {
        if (received.length >= w.n) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
      const answer = receiver.answers.shift() ?? receiver.fallback;
      if ('hang' in answer) {
        open.add(res);
        return;
      }
      if ('endlessBody' in answer) {
        open.add(res);
        res.writeHead(answer.status, { 'content-type': 'text/plain' });
        const timer = setInterval(() => res.write('x'.repeat(64 * 1024)), 5);
        timers.add(timer);
        res.on('close', () => {
          clearInterval(timer);
          timers.delete(timer);
        });
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the receiver has no TCP address');
  const port = address.port;
  receiver.port = port;
  receiver.url = `http://127.0.0.1:${port}/hook`;
  return receiver;
}

/** A port on 127.0.0.1 where nothing listens (connections to it are refused). */
export const closedPort = freePort;
