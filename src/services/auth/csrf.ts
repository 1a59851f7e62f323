// CSRF tokens bound to their session (CONTRACT §3.2 rev. 2): OWASP's signed double submit, an HMAC only the server can make.
import { hmac } from '../hmac.ts';
import { safeEqual } from './tokens.ts';

/** Which tokens a CSRF token is bound to: the session and the access token it was issued with. */
export type CsrfBinding = { sessionId: string; accessToken: string };

/**
 * HMAC-SHA256 under the server secret of the session id and the current access token, so only the server
 * can make one for a session, and a rotation (refresh, password change) retires the previous one together
 * with the previous access token. Each field is length-prefixed and the purpose leads, so the message can
 * be neither shifted between fields nor mistaken for another value the secret signs (cursors are base64url,
 * which has no `!`).
 */
export function csrfTokenFor(secret: Buffer, { sessionId, accessToken }: CsrfBinding): string {
  const message = ['csrf_token', sessionId, accessToken].map((field) => `${field.length}!${field}`).join('!');
  return hmac(secret, message);
}

/** The issued tokens plus the CSRF token bound to them. */
export function withCsrfToken<Tokens extends CsrfBinding>(secret: Buffer, tokens: Tokens): Tokens & { csrfToken: string } {
  return { ...tokens, csrfToken: csrfTokenFor(secret, tokens) };
}

/**
 * The double submit: the header equals the cookie, and that value is the one the server issued for the
 * session and access token that authenticated the request. Every comparison is constant-time.
 */
export function csrfTokenValid(secret: Buffer, binding: CsrfBinding, presented: { cookie: string | undefined; header: string | undefined }): boolean {
  const { cookie, header } = presented;
  if (!cookie || !header) return false;
  // Both comparisons run, so the time taken does not tell which one failed.
  const echoed = safeEqual(cookie, header);
  const issued = safeEqual(header, csrfTokenFor(secret, binding));
  return echoed && issued;
}
