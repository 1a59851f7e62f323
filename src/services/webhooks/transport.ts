// One delivery attempt on the wire (CONTRACT §4.12): POST the body, classify the answer or the failure in the contract's words, never hang.
import { isIP } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import type { DeliveryError } from '../../contracts/webhooks.ts';
import { DestinationNotAllowedError, guardedLookup, isForbiddenAddress, type Resolver } from './destination.ts';

export type AttemptResult =
  | { ok: true; status: number }
  | { ok: false; status: number | null; error: DeliveryError };

export type AttemptOptions = {
  /** The whole attempt (connect, send, answer) within this many milliseconds, else `timeout`. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE: connect anywhere. */
  allowPrivate: boolean;
  /** How host names are resolved (the system resolver by default; tests give their own). */
  resolve?: Resolver;
};

/**
 * A connector that refuses refused destinations before any packet leaves: a literal address in the URL is
 * checked here (Node does not call `lookup` for one), a name through the guarded lookup that net.connect
 * calls with the addresses it is about to connect to.
 */
function guardedConnector(opts: AttemptOptions): buildConnector.connector {
  const timeout = opts.timeoutMs;
  if (opts.allowPrivate) return buildConnector({ timeout });
  const connect = buildConnector({ timeout, lookup: guardedLookup(opts.resolve) });
  return (options, callback) => {
    const host = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname;
    if (isIP(host) !== 0 && isForbiddenAddress(host)) {
      callback(new DestinationNotAllowedError(host), null);
      return;
    }
    connect(options, callback);
  };
}

/** The codes of an error and of every error it wraps (undici and Node nest them in `cause`). */
function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof DestinationNotAllowedError) codes.push(current.code);
    else if ('code' in current && typeof current.code === 'string') codes.push(current.code);
    if (current instanceof AggregateError) for (const inner of current.errors) codes.push(...codesOf(inner));
    current = current.cause;
  }
  return codes;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** A failure without an answer, in the contract's words. */
function failureOf(error: unknown, timedOut: boolean): DeliveryError {
  const codes = codesOf(error);
  if (codes.includes('ERR_WEBHOOK_DESTINATION_NOT_ALLOWED')) return 'destination not allowed';
  if (timedOut || codes.some((c) => TIMEOUT_CODES.has(c))) return 'timeout';
  if (codes.includes('ECONNREFUSED')) return 'connection refused';
  return 'connection failed';
}

/**
 * POSTs `body` with `headers` to `url` and says how it went. Success is a 2xx answer within the timeout; a
 * 3xx is not followed (`redirect not followed`); any other status is `HTTP <status>`. The answer's body is
 * never read: the connection is closed as soon as the status is known, so a receiver that streams a huge or
 * endless body costs nothing. The connection is the attempt's own (no pool shared between attempts), and it
 * is destroyed at the end whatever happened, so nothing outlives the attempt.
 */
export async function attemptDelivery(url: string, body: string, headers: Record<string, string>, opts: AttemptOptions): Promise<AttemptResult> {
  const agent = new Agent({ connect: guardedConnector(opts), connections: 1, pipelining: 1 });
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  try {
    const answer = await request(url, {
      method: 'POST',
      headers,
      body,
      dispatcher: agent,
      signal: deadline,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
    // Destroying an unread body reports an abort on it, which is what is meant here.
    answer.body.on('error', () => {});
    answer.body.destroy();
    const status = answer.statusCode;
    if (status >= 200 && status < 300) return { ok: true, status };
    if (status >= 300 && status < 400) return { ok: false, status, error: 'redirect not followed' };
    return { ok: false, status, error: `HTTP ${status}` };
  } catch (error) {
    return { ok: false, status: null, error: failureOf(error, deadline.aborted) };
  } finally {
    // Not awaited: destroying sockets of a peer that never answers must not hold the worker.
    agent.destroy().catch(() => {});
  }
}
