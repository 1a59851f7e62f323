// auth.{setup, login, logout, refresh, changePassword, me, wsTicket, listSessions, revokeSession}
import { z } from 'zod';
import * as auth from '../../services/auth/auth.ts';
import { issueTicket } from '../../services/auth/wsTickets.ts';
import { NoContent, noContent } from '../noContent.ts';
import { authedProcedure, publicProcedure, router } from '../../trpc.ts';
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
} from './schemas.ts';

const tags = ['auth'];

export const authRouter = router({
  setup: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/setup', tags, protect: false, summary: 'First-run setup: create the CEO and sign in', errorResponses: [400, 409, 429, 500] },
      rest: { status: 201 },
      limits: { op: 'auth.setup' },
    })
    .input(SetupRequest)
    .output(CookieSessionResponse)
    .mutation(({ ctx, input }) => auth.setup(ctx, input)),

  login: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/login', tags, protect: false, summary: 'Sign in; sets the session, csrf_token and refresh_token cookies', errorResponses: [400, 401, 409, 429, 500] },
      limits: { op: 'auth.login' },
    })
    .input(LoginRequest)
    .output(CookieSessionResponse)
    .mutation(({ ctx, input }) => auth.login(ctx, input)),

  logout: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/logout', tags, summary: 'End the current session and clear the cookies (idempotent)', errorResponses: [400, 401, 403, 409, 429, 500, 503] },
      rest: { status: 204 },
    })
    .output(NoContent)
    .mutation(({ ctx }) => noContent(auth.logout(ctx))),

  refresh: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/refresh', tags, summary: 'Rotate both tokens using the refresh_token cookie', errorResponses: [400, 401, 403, 409, 429, 500, 503] },
      limits: { op: 'auth.refresh' },
    })
    .output(CookieSessionResponse)
    .mutation(({ ctx }) => auth.refresh(ctx)),

  changePassword: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/change-password', tags, summary: 'Change the password; ends every other session', errorResponses: [400, 401, 403, 409, 429, 500, 503] },
      limits: { op: 'auth.change_password' },
      allowPendingPasswordChange: true,
    })
    .input(ChangePasswordRequest)
    .output(UserInfoResponse)
    .mutation(({ ctx, input }) => auth.changePassword(ctx, ctx.actor, input)),

  me: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/auth/me', tags, summary: 'The signed-in user', errorResponses: [401, 429, 500, 503] },
      allowPendingPasswordChange: true,
    })
    .output(UserInfoResponse)
    .query(({ ctx }) => auth.me(ctx.actor)),

  wsTicket: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/ws-ticket', tags, summary: 'A one-time WebSocket ticket, valid 30 s', errorResponses: [400, 401, 403, 409, 429, 500, 503] },
      limits: { op: 'auth.ws_ticket' },
    })
    .output(WsTicketResponse)
    .mutation(({ ctx }) => issueTicket(ctx.em, ctx.deps, ctx.actor)),

  listSessions: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/auth/sessions', tags, summary: 'Active sessions (own, or all for the CEO)', errorResponses: [400, 401, 403, 429, 500, 503] },
      limits: { op: 'auth.sessions_list' },
    })
    .input(ListSessionsInput)
    .output(z.array(SessionResponse))
    .query(({ ctx, input }) => auth.listSessions(ctx, ctx.actor, input.scope)),

  revokeSession: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/auth/sessions/{session_id}', tags, summary: 'Revoke a session', errorResponses: [400, 401, 403, 404, 429, 500, 503] },
      rest: { status: 204 },
      limits: { op: 'auth.sessions_revoke' },
    })
    .input(RevokeSessionInput)
    .output(NoContent)
    .mutation(({ ctx, input }) => noContent(auth.revokeSession(ctx, ctx.actor, input.session_id))),
});
