// Login throttling after rate-limiter-flexible's login-protection recipe: per (username, IP) and per IP (CONTRACT §3.4).
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../errors.ts';
import type { LimiterStores } from '../../limits/stores.ts';

const CONSECUTIVE_FAILS_BY_USER_IP = { points: 10, duration: 15 * 60 };
const FAILS_BY_IP = { points: 100, duration: 60 * 60 };

/** The two failure counters; one pair per running service (built by createService), shared across instances by the PostgreSQL store. */
export type LoginThrottle = { readonly byUserIp: RateLimiterAbstract; readonly byIp: RateLimiterAbstract };

export function createLoginThrottle(stores: LimiterStores): LoginThrottle {
  return {
    byUserIp: stores.create({ keyPrefix: 'login_fail_user_ip', ...CONSECUTIVE_FAILS_BY_USER_IP }),
    byIp: stores.create({ keyPrefix: 'login_fail_ip', ...FAILS_BY_IP }),
  };
}

const userIpKey = (usernameKey: string, ip: string) => `${ip}|${usernameKey}`;

/**
 * Counts the attempt as a failure before the password is checked, so concurrent guesses cannot all pass a
 * check made before any of them was counted; a refused attempt gives its points back, a success its IP point.
 * Refuses (429/5001) once either counter is past its limit: the 11th attempt is the first refused.
 */
export async function beginLoginAttempt({ byUserIp, byIp }: LoginThrottle, usernameKey: string, ip: string): Promise<void> {
  const key = userIpKey(usernameKey, ip);
  // penalty() adds points without refusing, so it is the atomic increment both stores offer.
  const [userIp, perIp] = await Promise.all([byUserIp.penalty(key, 1), byIp.penalty(ip, 1)]);
  const waitMs = Math.max(
    userIp.consumedPoints > CONSECUTIVE_FAILS_BY_USER_IP.points ? userIp.msBeforeNext : 0,
    perIp.consumedPoints > FAILS_BY_IP.points ? perIp.msBeforeNext : 0,
  );
  if (waitMs > 0) {
    await Promise.all([byUserIp.reward(key, 1), byIp.reward(ip, 1)]);
    throw ApiError.rateLimited(5001, waitMs / 1000, 'too many failed login attempts; retry later');
  }
}

/** A success resets the (username, IP) counter and does not count against the IP. */
export async function recordLoginSuccess({ byUserIp, byIp }: LoginThrottle, usernameKey: string, ip: string): Promise<void> {
  await Promise.all([byUserIp.delete(userIpKey(usernameKey, ip)), byIp.reward(ip, 1)]);
}

/**
 * Gives back the points of an attempt that proved the password but asked for a one-time code (CONTRACT §3.6):
 * neither a failure, or every sign-in with two-factor would leave one behind, nor a success, or asking
 * without a code would reset the count of wrong codes and let them be guessed without end.
 */
export async function refundLoginAttempt({ byUserIp, byIp }: LoginThrottle, usernameKey: string, ip: string): Promise<void> {
  await Promise.all([byUserIp.reward(userIpKey(usernameKey, ip), 1), byIp.reward(ip, 1)]);
}
