// Liveness and readiness (CONTRACT §4.1).
import type { MikroORM } from '@mikro-orm/postgresql';
import type { BaseLogger } from 'pino';
import { ApiError } from '../../errors.ts';
import type { LivenessStatus, ReadinessStatus } from '../../contracts/probes.ts';
import { SERVICE_VERSION } from '../../version.ts';

const READINESS_TIMEOUT_MS = 2000;

export function liveness({ startedAt }: { startedAt: number }): LivenessStatus {
  return { status: 'ok', version: SERVICE_VERSION, uptime_seconds: uptime(startedAt) };
}

/** Ready when a database round-trip succeeds within 2 s; the 503 names the dependency, never driver text. */
export async function readiness({ orm, logger, startedAt }: { orm: MikroORM; logger: Pick<BaseLogger, 'warn'>; startedAt: number }): Promise<ReadinessStatus> {
  const check = await withTimeout(orm.checkConnection(), READINESS_TIMEOUT_MS).catch((error: unknown) => ({ ok: false as const, error }));
  if (!check.ok) {
    logger.warn({ err: check.error }, 'readiness check failed');
    throw ApiError.unavailable('persistence unavailable', { retryAfter: 5 });
  }
  return { status: 'ok', version: SERVICE_VERSION, persistence: true, uptime_seconds: uptime(startedAt) };
}

function uptime(startedAt: number): number {
  return Math.round((performance.now() - startedAt) / 10) / 100;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
