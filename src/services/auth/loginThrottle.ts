// Login throttling after rate-limiter-flexible's login-protection recipe: per (username, IP) and per IP (CONTRACT §3.4).
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Deps } from '../../context/deps.ts';
import { nativePool } from '../../db/pool.ts';
import { ApiError } from '../../errors.ts';
import { createLimiterStores } from '../../limits/stores.ts';

const CONSECUTIVE_FAILS_BY_USER_IP = { points: 10, duration: 15 * 60 };
const FAILS_BY_IP = { points: 100, duration: 60 * 60 };

type Throttle = { byUserIp: RateLimiterAbstract; byIp: RateLimiterAbstract };

// One pair of limiters per running service; the PostgreSQL store shares them across instances.
const throttles = new WeakMap<Deps, Promise<Throttle>>();

function throttleFor(deps: Deps): Promise<Throttle> {
  let throttle = throttles.get(deps);
  if (!throttle) {
    throttle = (async () => {
      const stores =
        deps.config.rateLimitStore === 'postgres'
          ? createLimiterStores({ kind: 'postgres', pool: await nativePool(deps.orm) })
          : createLimiterStores({ kind: 'memory' });
      return {
        byUserIp: stores.create({ keyPrefix: 'login_fail_user_ip', ...CONSECUTIVE_FAILS_BY_USER_IP }),
        byIp: stores.create({ keyPrefix: 'login_fail_ip', ...FAILS_BY_IP }),
      };
    })();
    throttles.set(deps, throttle);
  }
  return throttle;
}

const userIpKey = (usernameKey: string, ip: string) => `${ip}|${usernameKey}`;

/**
 * Counts the attempt as a failure before the password is checked, so concurrent guesses cannot all pass a
 * check made before any of them was counted; a refused attempt gives its points back, a success its IP point.
 * Refuses (429/5001) once either counter is past its limit: the 11th attempt is the first refused.
 */
export async function beginLoginAttempt(deps: Deps, usernameKey: string, ip: string): Promise<void> {
  const { byUserIp, byIp } = await throttleFor(deps);
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
export async function recordLoginSuccess(deps: Deps, usernameKey: string, ip: string): Promise<void> {
  const { byUserIp, byIp } = await throttleFor(deps);
  await Promise.all([byUserIp.delete(userIpKey(usernameKey, ip)), byIp.reward(ip, 1)]);
}
