// The three session cookies with their exact attributes (CONTRACT §3.2), written through the response sink of any transport.
import type { Config } from '../../config.ts';
import { COOKIE_NAMES } from '../../context/cookieNames.ts';
import type { ResponseSink } from '../../context/index.ts';
import type { SessionCookies } from '../../services/auth/auth.ts';

/** Path of the `session` cookie. */
export const SESSION_COOKIE_PATH = '/api';
/**
 * Path of the `refresh_token` cookie (rev. 2): all of /api, so that auth.refresh and auth.logout at
 * /api/trpc receive it, and logout can end a session whose access cookie the browser has already dropped.
 */
export const REFRESH_COOKIE_PATH = '/api';

type CookieValues = { access: string; csrf: string; refresh: string; accessMaxAge: number; refreshMaxAge: number };

function writeCookies(sink: ResponseSink, config: Pick<Config, 'cookieSecure'>, v: CookieValues): void {
  const base = { sameSite: 'strict', secure: config.cookieSecure } as const;
  sink.setCookie(COOKIE_NAMES.session, v.access, { ...base, path: SESSION_COOKIE_PATH, httpOnly: true, maxAge: v.accessMaxAge });
  // Readable by the page's script on purpose: it echoes the value in X-CSRF-Token (double submit).
  sink.setCookie(COOKIE_NAMES.csrf, v.csrf, { ...base, path: '/', httpOnly: false, maxAge: v.accessMaxAge });
  sink.setCookie(COOKIE_NAMES.refresh, v.refresh, { ...base, path: REFRESH_COOKIE_PATH, httpOnly: true, maxAge: v.refreshMaxAge });
}

/** Hands newly issued tokens to the client as cookies. */
export function setSessionCookies(sink: ResponseSink, config: Pick<Config, 'cookieSecure'>, tokens: SessionCookies): void {
  writeCookies(sink, config, {
    access: tokens.accessToken,
    csrf: tokens.csrfToken,
    refresh: tokens.refreshToken,
    accessMaxAge: tokens.expiresIn,
    refreshMaxAge: tokens.refreshExpiresIn,
  });
}

/** Logout: expires all three cookies and asks the browser to drop the site's cookies. */
export function clearSessionCookies(sink: ResponseSink, config: Pick<Config, 'cookieSecure'>): void {
  writeCookies(sink, config, { access: '', csrf: '', refresh: '', accessMaxAge: 0, refreshMaxAge: 0 });
  sink.setHeader('Clear-Site-Data', '"cookies"');
}
