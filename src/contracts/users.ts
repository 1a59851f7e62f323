// Schemas of the user-administration endpoints: UserResponse and the strict inputs of users.*.
import { z } from 'zod';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.ts';
import { Username } from './usernames.ts';
import { MAX_SCOPED_DEPARTMENTS, ORG_ROLES, ROLES } from './roles.ts';
import { page, pageQueryShape } from './pagination.ts';

export const UserRole = z.enum(ROLES).describe('The one role of a user.');

/** A person (signs in with a password) or a program (acts only through API keys, CONTRACT §3.5). */
export const USER_KINDS = ['human', 'service'] as const;
export type UserKind = (typeof USER_KINDS)[number];
export const UserKindSchema = z.enum(USER_KINDS).describe('`human`: a person who signs in with a password; `service`: a program that acts only through API keys.');
export const OrgRole = z.enum(ORG_ROLES).describe('An organization role; a user may hold several.');

const UserIdParam = z.string().min(1).max(128).describe('Id of the user.');
const Timestamp = z.iso.datetime({ precision: 3 });

export const UserResponse = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    username: z.string(),
    role: UserRole,
    kind: UserKindSchema,
    must_change_password: z.boolean().describe('The user must change the initial password before anything else.'),
    mfa_enabled: z.boolean().describe('Two-factor authentication is on.'),
    org_roles: z.array(OrgRole).describe('Organization roles held, sorted.'),
    scoped_departments: z.array(z.string()).describe('Departments the user administers (from department_admin), sorted, without duplicates.'),
    created_at: Timestamp,
    updated_at: Timestamp.describe('Changes on every change of the role or the organization roles.'),
  })
  .meta({ id: 'UserResponse' });
export type UserResponse = z.infer<typeof UserResponse>;

export const ListUsersInput = z.strictObject({ kind: UserKindSchema.nullish().describe('Only users of this kind.'), ...pageQueryShape });
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
      .optional()
      .describe(
        `Initial password (${MIN_PASSWORD_LENGTH}..${MAX_PASSWORD_LENGTH} characters), required for a human, who must change it at first sign-in; ` +
          'never sent for a service account, which has none.',
      ),
    role: UserRole,
    kind: UserKindSchema.default('human'),
  })
  // A person needs a password to sign in; a program never has one (it acts through API keys).
  .superRefine((input, ctx) => {
    if (input.kind === 'human' && input.password === undefined) ctx.addIssue({ code: 'custom', path: ['password'], message: 'required for a human user' });
    if (input.kind === 'service' && input.password !== undefined) ctx.addIssue({ code: 'custom', path: ['password'], message: 'not allowed for a service account' });
  })
  .meta({ id: 'CreateUserRequest' });
export type CreateUserInput = z.infer<typeof CreateUserInput>;

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
