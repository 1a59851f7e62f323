// A closed-loop load of JSON POSTs whose body changes with every request (autocannon's CLI sends one fixed body), measured as lib.ts's measure() does.
import { Pool } from 'undici';
import { z } from 'zod';
import type { Measured, ServerProcess } from './lib.ts';

/** A measured run, its 2xx count, and its non-2xx answers by status and detail (`401 invalid one-time code`). */
export type ClosedLoopResult = Measured & { ok: number; failures: Map<string, number> };

const Problem = z.object({ detail: z.string() });

/**
 * `connections` loops, each on a keep-alive connection of its own, each POSTing `path` with the body `next()`
 * gives and sending its next request once the answer has been read, for `durationS` seconds; then the
 * answers, the latencies and the server process's CPU time per answer. A `next()` that throws ends the run
 * with its error (the load cannot go on as intended).
 */
export async function closedLoop(server: ServerProcess, path: string, next: () => string, opts: { connections: number; durationS: number }): Promise<ClosedLoopResult> {
  const pool = new Pool(server.url, { connections: opts.connections, pipelining: 1 });
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  let ok = 0;
  let errors = 0;
  let stopped: unknown;
  const cpuBefore = server.cpuSeconds();
  const started = performance.now();
  const until = started + opts.durationS * 1000;
  try {
    await Promise.all(
      Array.from({ length: opts.connections }, async () => {
        while (stopped === undefined && performance.now() < until) {
          let body: string;
          try {
            body = next();
          } catch (error) {
            stopped = error;
            return;
          }
          const sent = performance.now();
          try {
            const res = await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json' }, body });
            const text = await res.body.text();
            latencies.push(performance.now() - sent);
            if (res.statusCode >= 200 && res.statusCode < 300) ok++;
            else {
              const parsed = Problem.safeParse(safeJson(text));
              const key = `${res.statusCode} ${parsed.success ? parsed.data.detail : text.slice(0, 80)}`;
              failures.set(key, (failures.get(key) ?? 0) + 1);
            }
          } catch {
            errors++;
          }
        }
      }),
    );
  } finally {
    await pool.close();
  }
  if (stopped !== undefined) throw stopped;
  const seconds = (performance.now() - started) / 1000;
  const cpu = server.cpuSeconds() - cpuBefore;
  const answered = latencies.length;
  const sorted = latencies.sort((a, b) => a - b);
  // Nearest rank: the smallest latency at least a fraction q of the answers took no longer than.
  const percentile = (q: number) => sorted[Math.max(0, Math.ceil(q * answered) - 1)] ?? NaN;
  return {
    requestsPerSecond: answered / seconds,
    p50: percentile(0.5),
    p99: percentile(0.99),
    non2xx: answered - ok,
    errors,
    cpuUsPerRequest: answered > 0 ? (cpu * 1e6) / answered : NaN,
    ok,
    failures,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
