// Organization roles held by users (many per user); department_admin carries its departments.
import { defineEntity, p } from '@mikro-orm/core';
import type { OrgRole } from '../../contracts/roles.ts';

export const UserOrgRoleSchema = defineEntity({
  name: 'UserOrgRole',
  tableName: 'user_org_roles',
  properties: {
    userId: p.uuid().primary(),
    // Typed as the roles user_org_roles_role_check admits.
    role: p.string().length(32).primary().$type<OrgRole>(),
    scopedDepartments: p.array().columnType('text[]').defaultRaw(`'{}'`),
    createdAt: p.datetime(3),
  },
  indexes: [{ name: 'user_org_roles_role_idx', properties: ['role'] }],
  checks: [{ name: 'user_org_roles_role_check', expression: `role in ('owner', 'department_admin', 'editor', 'viewer')` }],
});
export class UserOrgRole extends UserOrgRoleSchema.class {}
UserOrgRoleSchema.setClass(UserOrgRole);
