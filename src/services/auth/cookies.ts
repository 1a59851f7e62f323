// The three session cookies with their exact attributes (CONTRACT §3.2), set and cleared on any transport.
import type { Config } from '../../config.ts';
import type { ResponseSink } from '../../context/index.ts';
import { COOKIE_NAMES } from '../../context/fromFastify.ts';
import type { IssuedSession } from './sessions.ts';

export const REFRESH_COOKIE_PATH = '/api/v1/auth/refresh';

type CookieValues = { access: string; csrf: string; refresh: string; accessMaxAge: number; refreshMaxAge: number };

function writeCookies(sink: ResponseSink, config: Config, v: CookieValues): void {
  const base = { sameSite: 'strict', secure: config.cookieSecure } as const;
  sink.setCookie(COOKIE_NAMES.session, v.access, { ...base, path: '/api', httpOnly: true, maxAge: v.accessMaxAge });
  // Readable by the page's script on purpose: it echoes the value in X-CSRF-Token (double submit).
  sink.setCookie(COOKIE_NAMES.csrf, v.csrf, { ...base, path: '/', httpOnly: false, maxAge: v.accessMaxAge });
  sink.setCookie(COOKIE_NAMES.refresh, v.refresh, { ...base, path: REFRESH_COOKIE_PATH, httpOnly: true, maxAge: v.refreshMaxAge });
}

export function setSessionCookies(sink: ResponseSink, config: Config, issued: IssuedSession): void {
  writeCookies(sink, config, {
    access: issued.accessToken,
    csrf: issued.csrfToken,
    refresh: issued.refreshToken,
    accessMaxAge: issued.expiresIn,
    refreshMaxAge: issued.refreshExpiresIn,
  });
}

export function clearSessionCookies(sink: ResponseSink, config: Config): void {
  writeCookies(sink, config, { access: '', csrf: '', refresh: '', accessMaxAge: 0, refreshMaxAge: 0 });
}
