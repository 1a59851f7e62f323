// users.{list, get, create, updateRole, delete, grantOrgRole, revokeOrgRole, resetMfa}
import { authedProcedure, ceoProcedure, router } from '../../trpc.ts';
import { idempotently } from '../idempotency.ts';
import { NoContent, noContent } from '../noContent.ts';
import * as orgRoles from '../../services/users/orgRoles.ts';
import * as users from '../../services/users/users.ts';
import * as mfa from '../../services/mfa/mfa.ts';
import { ResetMfaInput } from '../../contracts/mfa.ts';
import {
  CreateUserInput,
  DeleteUserInput,
  GetUserInput,
  GrantOrgRoleInput,
  ListUsersInput,
  ListUsersOutput,
  RevokeOrgRoleInput,
  UpdateUserRoleInput,
  UserResponse,
} from '../../contracts/users.ts';

const tags = ['users'];
const NO_USER = 'No user has this id.';

export const usersRouter = router({
  list: authedProcedure
    .meta({
      apiKey: 'users:read',
      openapi: { method: 'GET', path: '/users', tags, summary: 'List users, oldest first (created_at, id)' },
      rest: { list: true },
    })
    .input(ListUsersInput)
    .output(ListUsersOutput)
    .query(({ ctx, input }) => users.listUsers({ em: ctx.em, secret: ctx.deps.secret }, input)),

  get: authedProcedure
    .meta({
      apiKey: 'users:read',
      openapi: { method: 'GET', path: '/users/{user_id}', tags, summary: 'Get a user' },
      rest: { etag: true },
      errors: { 3000: NO_USER },
    })
    .input(GetUserInput)
    .output(UserResponse)
    .query(({ ctx, input }) => users.getUser({ em: ctx.em }, input)),

  create: ceoProcedure
    .meta({
      openapi: { method: 'POST', path: '/users', tags, summary: 'Create a user who must change the password at first sign-in' },
      rest: { status: 201, location: '/api/v1/users/{id}', etag: true, idempotencyKey: true },
      errors: {
        2000: 'The password is whitespace only, equals or contains the username, or is too common.',
        4000: '`role: ceo`: there is already a CEO.',
        4001: 'The username is taken (compared case-insensitively, look-alike characters included).',
      },
      limits: { op: 'users.create' },
    })
    .input(CreateUserInput)
    .output(UserResponse)
    .mutation(({ ctx, input }) =>
      idempotently(ctx, { operation: 'users.create', input, output: UserResponse }, (em) => users.createUser({ em, clock: ctx.deps.clock, actor: ctx.actor }, input)),
    ),

  updateRole: ceoProcedure
    .meta({
      openapi: { method: 'PATCH', path: '/users/{user_id}', tags, summary: "Change a user's role (If-Match honoured)" },
      rest: { etag: true, ifMatch: true },
      errors: { 3000: NO_USER, 4000: "Changing the CEO's role, or making a second CEO." },
      limits: { op: 'users.update_role' },
    })
    .input(UpdateUserRoleInput)
    .output(UserResponse)
    .mutation(({ ctx, input }) => users.updateUserRole({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, { ...input, ifMatch: ctx.credentials.ifMatch })),

  // 409 is not in SERVICE-SPEC's table for this operation, but CONTRACT §4.3 (which wins) answers self/CEO/last owner with it.
  delete: ceoProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/users/{user_id}', tags, summary: "Delete a user and revoke all of the user's sessions" },
      rest: { status: 204, ifMatch: true },
      errors: { 3000: NO_USER, 4000: 'Deleting yourself, the CEO, or the last owner.' },
      limits: { op: 'users.delete' },
    })
    .input(DeleteUserInput)
    .output(NoContent)
    .mutation(({ ctx, input }) =>
      noContent(users.deleteUser({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, { ...input, ifMatch: ctx.credentials.ifMatch })),
    ),

  grantOrgRole: ceoProcedure
    .meta({
      openapi: { method: 'POST', path: '/users/{user_id}/org-roles', tags, summary: 'Grant an organization role' },
      rest: { status: 201, etag: true, ifMatch: true },
      errors: {
        2000: '`department_admin` without scoped departments, or another org role with some.',
        3000: NO_USER,
        4001: 'The user already holds this org role.',
      },
      limits: { op: 'users.grant_org_role' },
    })
    .input(GrantOrgRoleInput)
    .output(UserResponse)
    .mutation(({ ctx, input }) => orgRoles.grantOrgRole({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, { ...input, ifMatch: ctx.credentials.ifMatch })),

  // 409 (last owner) as for delete: required by CONTRACT §4.3, missing from SERVICE-SPEC's table.
  revokeOrgRole: ceoProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/users/{user_id}/org-roles/{role}', tags, summary: 'Revoke an organization role' },
      rest: { status: 204, ifMatch: true },
      errors: { 3000: `${NO_USER} Or the user does not hold this org role.`, 4000: 'Removing the last owner.' },
      limits: { op: 'users.revoke_org_role' },
    })
    .input(RevokeOrgRoleInput)
    .output(NoContent)
    .mutation(({ ctx, input }) => noContent(orgRoles.revokeOrgRole({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, { ...input, ifMatch: ctx.credentials.ifMatch }))),

  resetMfa: ceoProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/users/{user_id}/mfa',
        tags,
        summary: "Turn off a user's two-factor authentication (a lost phone)",
        description: 'The user then signs in with the password alone, and may enroll again; their sessions stay. Recorded as `mfa.reset` in the audit log.',
      },
      rest: { status: 204 },
      errors: { 3000: NO_USER, 4000: 'Two-factor authentication is not on for this user.' },
      limits: { op: 'users.reset_mfa' },
    })
    .input(ResetMfaInput)
    .output(NoContent)
    .mutation(({ ctx, input }) => noContent(mfa.resetMfa({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, input))),
});
