// Liveness, readiness and the capability report (CONTRACT §4.1).
import type { Deps } from '../../context/deps.ts';
import { ApiError } from '../../errors.ts';

const READINESS_TIMEOUT_MS = 2000;

export function liveness(deps: Deps) {
  return { status: 'ok' as const, uptime_seconds: uptime(deps) };
}

/** Ready when a database round-trip succeeds within 2 s; the 503 names the dependency, never driver text. */
export async function readiness(deps: Deps) {
  const ok = await withTimeout(
    deps.orm.em
      .getConnection()
      .execute('select 1')
      .then(() => true),
    READINESS_TIMEOUT_MS,
  ).catch((error: unknown) => {
    deps.logger.warn({ err: error }, 'readiness check failed');
    return false;
  });
  if (!ok) throw ApiError.unavailable('persistence unavailable', { retryAfter: 5 });
  return { status: 'ok' as const, persistence: true as const, uptime_seconds: uptime(deps) };
}

function uptime(deps: Deps): number {
  return Math.round((performance.now() - deps.startedAt) / 10) / 100;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
