// Who a call acts for, and the credentials a transport found on it: what guards, limits and events read.
import type { Scope } from './apiKeys.ts';
import type { Role } from './roles.ts';
import type { UserKind } from './users.ts';

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

/** The user a call acts for, read fresh with its credential on every request (CONTRACT §3.1). */
type ActingUser = {
  userId: string;
  username: string;
  role: Role;
  kind: UserKind;
  mustChangePassword: boolean;
  /** Two-factor authentication is on (CONTRACT §3.6): what the MFA_REQUIRED_ROLES gate and `mfa_enabled` read. */
  mfaEnabled: boolean;
  orgRoles: string[];
  scopedDepartments: string[];
};

/** A call made with a session's access token. */
export type SessionActor = ActingUser & {
  sessionId: string;
  /** How the request proved who it is; CSRF applies to cookies only. */
  via: 'cookie' | 'bearer';
  apiKey?: undefined;
};

/** A call made with an API key (CONTRACT §3.5): no session; the user's role narrowed by the key's scopes. */
export type ApiKeyActor = ActingUser & {
  sessionId: null;
  via: 'api_key';
  apiKey: { id: string; name: string; prefix: string; scopes: Scope[] };
};

/** One actor whatever the credential: guards, limits and events read this, never the credential itself. */
export type Actor = SessionActor | ApiKeyActor;
