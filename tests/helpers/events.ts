// Event-test shortcuts: record events in real transactions, and a `ws` client that collects frames and close codes.
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { kysely } from '../../src/db/kysely.ts';
import type { EventType } from '../../src/contracts/events.ts';
import { recordEvent } from '../../src/events/record.ts';
import type { TestService } from './service.ts';
import type { TestUser } from './users.ts';

/** A `user.deleted` payload: the smallest event, unique by its `id`. */
export function marker(label: string = randomUUID()) {
  return { id: label, username: `u-${label}` };
}

/** Records `user.deleted` events (one transaction each, in order) and returns their markers. */
export async function recordMarkers(svc: TestService, count: number, prefix: string = randomUUID()): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const data = marker(`${prefix}-${String(i)}`);
    await svc.deps.orm.em.fork().transactional((tx) => recordEvent(tx, { type: 'user.deleted', actor: 'tester', data }));
    ids.push(data.id);
  }
  return ids;
}

/** An approval payload as GET /approvals/{id} returns it (ApprovalResponse), with a description of `size` characters. */
export function approvalData(size = 64) {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    action_type: 'deploy:production',
    title: 'ship it',
    description: 'x'.repeat(size),
    requested_by: 'alice',
    risk_level: 'high' as const,
    status: 'pending' as const,
    created_at: now,
    expires_at: null,
    decided_at: null,
    decided_by: null,
    decision_reason: null,
    task_id: null,
    metadata: {},
    seconds_remaining: null,
    urgency_level: 'no_expiry' as const,
  };
}

export type LiveEventBody = { id: string; type: string; channel: string; actor: string | null; occurred_at: string; data: Record<string, unknown> };
export type Frame = {
  type: string;
  event?: LiveEventBody;
  channels?: string[];
  error?: { status: number; error_code: number; detail: string; instance: string; type: string; title: string };
};

export async function listen(svc: TestService): Promise<string> {
  const address = await svc.app.listen({ port: 0, host: '127.0.0.1' });
  return address.replace(/^http/, 'ws');
}

export async function ticketFor(user: TestUser): Promise<string> {
  return (await user.caller.auth.wsTicket()).ticket;
}

/** A test client: frames in arrival order, awaited one by one; the close code and reason once closed. */
export class TestSocket {
  readonly ws: WebSocket;
  private readonly frames: Frame[] = [];
  private waiters: (() => void)[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      if (isBinary) throw new Error('binary frame from the server');
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8');
      const frame: Frame = JSON.parse(text);
      this.frames.push(frame);
      this.wake();
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => {
      this.wake();
      resolve({ code, reason: reason.toString('utf8') });
    }));
  }

  /** Opens a socket with a fresh ticket of `user` (or the given ticket). */
  static async open(base: string, who: TestUser | { ticket: string }, headers: Record<string, string> = {}): Promise<TestSocket> {
    const ticket = 'ticket' in who ? who.ticket : await ticketFor(who);
    const ws = new WebSocket(`${base}/api/v1/ws?ticket=${encodeURIComponent(ticket)}`, { headers });
    const socket = new TestSocket(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${String(res.statusCode)}`)));
    });
    return socket;
  }

  send(frame: object | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The next frame (in order), waiting up to `timeoutMs`. */
  async next(timeoutMs = 3000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = this.frames.shift();
      if (frame) return frame;
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error('socket closed while waiting for a frame');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no frame within ${String(timeoutMs)} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends `frame` and returns the next frame. */
  async request(frame: object | string, timeoutMs?: number): Promise<Frame> {
    this.send(frame);
    return this.next(timeoutMs);
  }

  /** The next `count` frames, all of which must be events. */
  async events(count: number, timeoutMs = 5000): Promise<LiveEventBody[]> {
    const out: LiveEventBody[] = [];
    while (out.length < count) {
      const frame = await this.next(timeoutMs);
      if (frame.type !== 'event' || !frame.event) throw new Error(`expected an event, got ${JSON.stringify(frame)}`);
      out.push(frame.event);
    }
    return out;
  }

  /** Frames received and not yet taken. */
  pending(): Frame[] {
    return [...this.frames];
  }

  close(): void {
    this.ws.close();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** What the server answers an upgrade it refuses: status, headers and parsed body. */
export async function refusedUpgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: Record<string, unknown> }> {
  const ws = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.close();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    ws.once('error', () => undefined);
  });
}

/** How many events of `type` the outbox holds (published or not): a committed change adds exactly one. */
export async function countEvents(svc: TestService, type: EventType): Promise<number> {
  const row = await kysely(svc.deps.orm.em.fork())
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('type', '=', type)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Every event `socket` receives up to a marker recorded now (the socket must be subscribed to `users`).
 * Ids follow commit order, so the events of every change committed before this call come before the
 * marker: what is returned is complete, and a change's event missing from it was never written.
 */
export async function eventsUpToNow(svc: TestService, socket: TestSocket): Promise<LiveEventBody[]> {
  const [fence] = await recordMarkers(svc, 1, `fence-${randomUUID()}`);
  const received: LiveEventBody[] = [];
  for (;;) {
    const [event] = await socket.events(1);
    if (!event) continue;
    if (event.type === 'user.deleted' && event.data.id === fence) return received;
    received.push(event);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true, or fails after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
