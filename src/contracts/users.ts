// Schemas of the user-administration endpoints: UserResponse and the strict inputs of users.*.
import { z } from 'zod';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.ts';
import { Username } from './usernames.ts';
import { MAX_SCOPED_DEPARTMENTS, ORG_ROLES, ROLES } from './roles.ts';
import { page, pageQueryShape } from './pagination.ts';

export const UserRole = z.enum(ROLES).describe('The one role of a user.');
export const OrgRole = z.enum(ORG_ROLES).describe('An organization role; a user may hold several.');

const UserIdParam = z.string().min(1).max(128).describe('Id of the user.');
const Timestamp = z.iso.datetime({ precision: 3 });

export const UserResponse = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    username: z.string(),
    role: UserRole,
    must_change_password: z.boolean().describe('The user must change the initial password before anything else.'),
    org_roles: z.array(OrgRole).describe('Organization roles held, sorted.'),
    scoped_departments: z.array(z.string()).describe('Departments the user administers (from department_admin), sorted, without duplicates.'),
    created_at: Timestamp,
    updated_at: Timestamp.describe('Changes on every change of the role or the organization roles.'),
  })
  .meta({ id: 'UserResponse' });
export type UserResponse = z.infer<typeof UserResponse>;

export const ListUsersInput = z.strictObject({ ...pageQueryShape });
export type ListUsersInput = z.infer<typeof ListUsersInput>;
export const ListUsersOutput = page(UserResponse);

export const GetUserInput = z.strictObject({ user_id: UserIdParam });

export const CreateUserInput = z
  .strictObject({
    username: Username.describe('1..128 characters, stored trimmed and NFC-normalised; unique case-insensitively.'),
    password: z
      .string()
      .min(MIN_PASSWORD_LENGTH)
      .max(MAX_PASSWORD_LENGTH)
      .describe(`Initial password (${MIN_PASSWORD_LENGTH}..${MAX_PASSWORD_LENGTH} characters); the user must change it at first sign-in.`),
    role: UserRole,
  })
  .meta({ id: 'CreateUserRequest' });

export const UpdateUserRoleInput = z.strictObject({ user_id: UserIdParam, role: UserRole }).meta({ id: 'UpdateUserRoleRequest' });

export const DeleteUserInput = z.strictObject({ user_id: UserIdParam });

export const GrantOrgRoleInput = z.strictObject({
  user_id: UserIdParam,
  role: OrgRole,
  scoped_departments: z
    .array(z.string().trim().min(1).max(128))
    .max(MAX_SCOPED_DEPARTMENTS)
    .nullish()
    .describe('Required and non-empty for department_admin; must be absent, null or empty for every other org role.'),
}).meta({ id: 'GrantOrgRoleRequest' });

export const RevokeOrgRoleInput = z.strictObject({
  user_id: UserIdParam,
  role: OrgRole,
});
