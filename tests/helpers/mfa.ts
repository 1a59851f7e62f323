// Test shortcuts for two-factor authentication: a clock that steps through TOTP steps, codes as an authenticator app computes them, users with TOTP on.
import { decodeBase32IgnorePadding } from '@oslojs/encoding';
import { generateHOTP } from '@oslojs/otp';
import { expect } from 'vitest';
import type { Clock } from '../../src/contracts/clock.ts';
import type { TestUser } from './users.ts';

/** A clock the test moves by hand: codes are computed for its time, and a new 30-second step is one `nextStep()` away. */
export type ManualClock = Clock & { advance(seconds: number): void; nextStep(): void };

export function manualClock(start = Date.now()): ManualClock {
  let at = start;
  return {
    now: () => new Date(at),
    advance: (seconds) => void (at += seconds * 1000),
    nextStep: () => void (at += 30_000),
  };
}

/**
 * The code an authenticator app shows for the base32 `secret` at `at` (RFC 6238: SHA-1, 6 digits, 30 s),
 * `steps` steps later (negative: earlier); computed with the library's HOTP, not with the service's code.
 */
export function totpCode(secret: string, at: Date, steps = 0): string {
  const step = Math.floor(at.getTime() / 1000 / 30) + steps;
  return generateHOTP(decodeBase32IgnorePadding(secret), BigInt(step), 6);
}

/** A code that is none of the accepted ones at `at` (not the previous, current or next step's). */
export function wrongCode(secret: string, at: Date): string {
  const accepted = new Set([-1, 0, 1].map((s) => totpCode(secret, at, s)));
  for (let n = 0; ; n++) {
    const candidate = String(n).padStart(6, '0');
    if (!accepted.has(candidate)) return candidate;
  }
}

export type Enrolled = { secret: string; recoveryCodes: string[] };

/**
 * Turns TOTP on for `user` through the API (enroll, then confirm with the current code), then moves the clock
 * to the next step, so the next code the test computes has not been used.
 */
export async function enableMfa(user: TestUser, clock: ManualClock): Promise<Enrolled> {
  const { secret } = await user.caller.auth.mfa.enroll();
  const { recovery_codes } = await user.caller.auth.mfa.confirm({ code: totpCode(secret, clock.now()) });
  expect(recovery_codes).toHaveLength(10);
  clock.nextStep();
  return { secret, recoveryCodes: recovery_codes };
}
