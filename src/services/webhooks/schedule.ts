// When a failed delivery attempt is tried again (CONTRACT §4.12): WEBHOOK_RETRY_BASE_S × 1, 6, 24, 120, 720, 2160, 4320, ±20 %.
/** Multiples of WEBHOOK_RETRY_BASE_S after the 1st, 2nd, … failed attempt (5 s, 30 s, 2 min, 10 min, 1 h, 3 h, 6 h by default). */
export const RETRY_FACTORS = [1, 6, 24, 120, 720, 2160, 4320] as const;

/** Each delay is drawn within this fraction either side, so receivers that failed together are not retried together. */
export const RETRY_JITTER = 0.2;

/**
 * Seconds from the `failedAttempts`-th failed attempt (1 the first) to the next attempt. Beyond the table
 * (WEBHOOK_MAX_ATTEMPTS above 8) the last step repeats. `random` in [0, 1) draws the jitter.
 */
export function retryDelayS(failedAttempts: number, baseS: number, random: () => number = Math.random): number {
  const index = Math.min(Math.max(failedAttempts, 1), RETRY_FACTORS.length) - 1;
  const factor = RETRY_FACTORS[index] ?? 1;
  return baseS * factor * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random());
}
