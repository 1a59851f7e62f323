// auth.{setup, login, logout, refresh, changePassword, me, wsTicket, listSessions, revokeSession}, and auth.mfa.* (mfaRouter.ts)
import { z } from 'zod';
import type { Context } from '../../context/index.ts';
import * as auth from '../../services/auth/auth.ts';
import { issueTicket } from '../../services/auth/wsTickets.ts';
import { NoContent, noContent } from '../noContent.ts';
import { authedProcedure, publicProcedure, router } from '../../trpc.ts';
import { clearSessionCookies, setSessionCookies } from './cookies.ts';
import { mfaRouter } from './mfaRouter.ts';
import {
  ChangePasswordRequest,
  CookieSessionResponse,
  ListSessionsInput,
  LoginRequest,
  RevokeSessionInput,
  SessionResponse,
  SetupRequest,
  UserInfoResponse,
  WsTicketResponse,
} from '../../contracts/auth.ts';

const tags = ['auth'];

const sessionsOf = (ctx: Context) => ({ em: ctx.em, clock: ctx.deps.clock, config: ctx.deps.config, secret: ctx.deps.secret });
const clientOf = (ctx: Context) => ({ ip: ctx.ip, userAgent: ctx.userAgent });

/**
 * Sets the tokens an operation issued as the session cookies (the service stays transport-free) and answers
 * with its body; bearer callers take a new access token from the `session` Set-Cookie too.
 */
function withSessionCookies<Response>(ctx: Context, { tokens, response }: auth.WithTokens<Response>): Response {
  setSessionCookies(ctx.response, ctx.deps.config, tokens);
  return response;
}

export const authRouter = router({
  setup: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/setup', tags, summary: 'First-run setup: create the CEO and sign in' },
      rest: { status: 201, cookies: { writes: 'issue' } },
      errors: { 2000: 'The password is whitespace only, equals or contains the username, or is too common.', 4000: 'First-run setup has already been done (a CEO exists).' },
      limits: { op: 'auth.setup' },
    })
    .input(SetupRequest)
    .output(CookieSessionResponse)
    .mutation(async ({ ctx, input }) =>
      withSessionCookies(ctx, await auth.setup({ ...sessionsOf(ctx), setupLatch: ctx.deps.setupLatch }, { ...input, client: clientOf(ctx) })),
    ),

  login: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/login', tags, summary: 'Sign in; sets the session, csrf_token and refresh_token cookies' },
      rest: { cookies: { writes: 'issue' } },
      errors: {
        1000:
          'Wrong username or password (one answer for both); or the right temporary password after TEMP_PASSWORD_TTL_S (`temporary password has expired`); ' +
          'or, with the right password of a user who has two-factor authentication on, no `otp` (`one-time code required`) or a wrong or used one (`invalid one-time code`).',
        4000: 'First-run setup has not been done yet.',
        5001: 'Login is throttled after 10 failures for this username and IP within 15 minutes, or 100 failures for this IP within an hour (wrong one-time codes count).',
      },
      limits: { op: 'auth.login' },
    })
    .input(LoginRequest)
    .output(CookieSessionResponse)
    .mutation(async ({ ctx, input }) =>
      withSessionCookies(
        ctx,
        await auth.login({ ...sessionsOf(ctx), setupLatch: ctx.deps.setupLatch, loginThrottle: ctx.deps.loginThrottle }, { ...input, client: clientOf(ctx) }),
      ),
    ),

  logout: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/logout', tags, summary: 'End the current session and clear the cookies (idempotent)',
        description:
          'Needs no credential: the session to end is found from whatever the client still holds (the `session` cookie or a bearer token, ' +
          'valid or expired, else the `refresh_token` cookie). Without any, nothing is revoked and the answer is the same. ' +
          'The body and query are never read, so no input can keep a session alive.',
      },
      rest: { status: 204, cookies: { reads: ['session', 'refresh_token'], writes: 'clear' } },
      errors: {
        1001:
          'Sent with the `session` or `refresh_token` cookie from another site: an `Origin` that is neither the service\'s own nor listed in ' +
          '`CORS_ORIGINS` (`null` included), or without one, `Sec-Fetch-Site: cross-site`. Nothing is changed.',
      },
      ignoresInput: true,
    })
    .output(NoContent)
    .mutation(async ({ ctx }) => {
      const { cookieToken, bearerToken, refreshToken, site } = ctx.credentials;
      const byCookie = cookieToken !== undefined || refreshToken !== undefined;
      await auth.logout({ em: ctx.em, clock: ctx.deps.clock, config: ctx.deps.config }, { accessTokens: [cookieToken, bearerToken], refreshToken, byCookie, site });
      clearSessionCookies(ctx.response, ctx.deps.config);
      return undefined;
    }),

  refresh: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/refresh', tags, summary: 'Rotate both tokens using the refresh_token cookie',
        description:
          'Works from the `refresh_token` cookie alone (no access token needed, so it also works after the access token expired). ' +
          'Both tokens rotate: the presented refresh token and the old access token stop working at once.',
      },
      rest: { cookies: { reads: ['refresh_token'], writes: 'issue' } },
      errors: {
        1000: 'No `refresh_token` cookie, or an unknown or expired one.',
        1002: 'The refresh token was already used: the whole session is revoked, its newest tokens too.',
      },
      limits: { op: 'auth.refresh' },
    })
    .output(CookieSessionResponse)
    .mutation(async ({ ctx }) => withSessionCookies(ctx, await auth.refresh(sessionsOf(ctx), ctx.credentials.refreshToken))),

  changePassword: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/change-password', tags, summary: 'Change the password; ends every other session' },
      rest: { cookies: { writes: 'issue' } },
      errors: {
        2000: 'The current password is wrong, or the new one equals it, is whitespace only, equals or contains the username, or is too common.',
        5001: 'Too many wrong current passwords: they count toward the login throttle of this user and IP (10 within 15 minutes).',
      },
      limits: { op: 'auth.change_password' },
      allowPendingPasswordChange: true,
      allowPendingMfaEnrollment: true,
    })
    .input(ChangePasswordRequest)
    .output(UserInfoResponse)
    .mutation(async ({ ctx, input }) =>
      withSessionCookies(ctx, await auth.changePassword({ ...sessionsOf(ctx), actor: ctx.actor, loginThrottle: ctx.deps.loginThrottle }, { ...input, client: clientOf(ctx) })),
    ),

  me: authedProcedure
    .meta({
      apiKey: 'unscoped',
      openapi: { method: 'GET', path: '/auth/me', tags, summary: 'The signed-in user' },
      allowPendingPasswordChange: true,
      allowPendingMfaEnrollment: true,
    })
    .output(UserInfoResponse)
    .query(({ ctx }) => auth.me(ctx.actor)),

  wsTicket: authedProcedure
    .meta({
      apiKey: 'events:read',
      openapi: { method: 'POST', path: '/auth/ws-ticket', tags, summary: 'A one-time WebSocket ticket, valid 30 s' },
      errors: { 4000: 'The user already holds 5 unredeemed tickets.' },
      limits: { op: 'auth.ws_ticket' },
    })
    .output(WsTicketResponse)
    .mutation(({ ctx }) => issueTicket({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor })),

  listSessions: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/auth/sessions', tags, summary: 'Active sessions (own, or all for the CEO)' },
      errors: { 1001: '`scope=all` by anyone but the CEO.' },
      limits: { op: 'auth.sessions_list' },
    })
    .input(ListSessionsInput)
    .output(z.array(SessionResponse))
    .query(({ ctx, input }) => auth.listSessions({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, input.scope)),

  revokeSession: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/auth/sessions/{session_id}', tags, summary: 'Revoke a session' },
      errors: { 3000: 'No such session, or another user\'s session and the caller is not the CEO.' },
      rest: { status: 204 },
      limits: { op: 'auth.sessions_revoke' },
    })
    .input(RevokeSessionInput)
    .output(NoContent)
    .mutation(({ ctx, input }) => noContent(auth.revokeSession({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, input.session_id))),

  mfa: mfaRouter,
});
