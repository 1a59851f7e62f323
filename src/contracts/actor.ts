// Who a call acts for, and the credentials a transport found on it: what guards, limits and events read.
import type { Role } from './roles.ts';

/** Credentials as the transport found them; resolved to an actor only when a procedure needs one. */
export type Credentials = {
  /** Value of the `session` cookie, if any. */
  cookieToken?: string | undefined;
  /** Token of `Authorization: Bearer <token>`, if the header was well-formed. */
  bearerToken?: string | undefined;
  /** The `csrf_token` cookie and the `X-CSRF-Token` header (double submit, CONTRACT §3.2). */
  csrfCookie?: string | undefined;
  csrfHeader?: string | undefined;
  /** The `refresh_token` cookie (Path=/api: sent with every API request, read by refresh and logout). */
  refreshToken?: string | undefined;
  /** Conditional-request header for optimistic concurrency (CONTRACT §2.1). */
  ifMatch?: string | undefined;
  /** `Idempotency-Key` of a create that may be retried (CONTRACT §2.5). */
  idempotencyKey?: string | undefined;
  /** Where a browser says the request comes from, and where it was sent (cross-site logout, CONTRACT §3.7). */
  site?: RequestSite | undefined;
};

/** A browser's `Origin` and `Sec-Fetch-Site` headers, and the origin the request was addressed to (its scheme and Host). */
export type RequestSite = { origin: string | undefined; fetchSite: string | undefined; target: string };

export type Actor = {
  userId: string;
  username: string;
  role: Role;
  mustChangePassword: boolean;
  orgRoles: string[];
  scopedDepartments: string[];
  sessionId: string;
  /** How the request proved who it is; CSRF applies to cookies only. */
  via: 'cookie' | 'bearer';
};
