// Schemas of the authentication and session endpoints (CONTRACT §4.2).
import { z } from 'zod';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.ts';
import { Username } from './usernames.ts';
import { ORG_ROLES, ROLES } from './roles.ts';
import { UserKindSchema } from './users.ts';
import { ApiKeyInfo } from './apiKeys.ts';
import { OneTimeCode } from './mfa.ts';

// Annotations for the OpenAPI document only; validation stays as written.
const uuid = { format: 'uuid' } as const;
const dateTime = { format: 'date-time' } as const;

const NewPassword = z
  .string()
  .min(MIN_PASSWORD_LENGTH)
  .max(MAX_PASSWORD_LENGTH)
  .describe(`${MIN_PASSWORD_LENGTH}..${MAX_PASSWORD_LENGTH} characters, not whitespace-only, not the username nor containing it (names of 4+ characters), not a common password; compared exactly as sent`);
// Logins accept any length so a wrong short password is a 401 like any other wrong password.
const AnyPassword = z.string().min(1).max(1024);

export const SetupRequest = z.strictObject({ username: Username, password: NewPassword }).meta({ id: 'SetupRequest' });
export const LoginRequest = z
  .strictObject({
    username: Username,
    password: AnyPassword,
    otp: OneTimeCode.optional().describe(
      'Needed once two-factor authentication is on (CONTRACT §3.6): a current code of the authenticator app, or an unused recovery code (used up). Ignored for a user without it.',
    ),
  })
  .meta({ id: 'LoginRequest' });
export const ChangePasswordRequest = z
  .strictObject({ current_password: AnyPassword, new_password: NewPassword })
  .meta({ id: 'ChangePasswordRequest' });

export const UserInfoResponse = z
  .object({
    id: z.string().meta(uuid),
    username: z.string(),
    role: z.enum(ROLES),
    kind: UserKindSchema,
    must_change_password: z.boolean(),
    mfa_enabled: z.boolean().describe('Two-factor authentication is on.'),
    org_roles: z.array(z.string()).meta({ items: { type: 'string', enum: [...ORG_ROLES] } }).describe('Organization roles held, sorted.'),
    scoped_departments: z.array(z.string()),
    api_key: ApiKeyInfo.optional(),
  })
  .meta({ id: 'UserInfoResponse' });
export type UserInfoResponse = z.infer<typeof UserInfoResponse>;

export const CookieSessionResponse = z
  .object({
    session_id: z.string().meta(uuid),
    expires_in: z.int().describe('Seconds the access token (the `session` cookie) stays valid'),
    refresh_expires_in: z.int().describe('Seconds the refresh token stays valid'),
    must_change_password: z.boolean(),
    user: UserInfoResponse,
  })
  .meta({ id: 'CookieSessionResponse' });
export type CookieSessionResponse = z.infer<typeof CookieSessionResponse>;

export const WsTicketResponse = z
  .object({ ticket: z.string(), expires_in: z.literal(30) })
  .meta({ id: 'WsTicketResponse' });
export type WsTicketResponse = z.infer<typeof WsTicketResponse>;

export const SessionResponse = z
  .object({
    session_id: z.string().meta(uuid),
    user_id: z.string().meta(uuid),
    username: z.string(),
    ip_address: z.string().nullable(),
    user_agent: z.string().nullable(),
    created_at: z.string().meta(dateTime),
    last_active_at: z.string().meta(dateTime),
    expires_at: z.string().meta(dateTime),
    is_current: z.boolean(),
  })
  .meta({ id: 'SessionResponse' });
export type SessionResponse = z.infer<typeof SessionResponse>;

export const ListSessionsInput = z.object({
  scope: z.enum(['own', 'all']).default('own').describe('`all` lists every user\'s sessions (CEO only)'),
});

export const RevokeSessionInput = z.object({ session_id: z.string().min(1).max(128) });
