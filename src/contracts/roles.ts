// The user roles and organization roles of CONTRACT §3.1: one role per user, many org roles.
export const ROLES = ['ceo', 'manager', 'board_member', 'pair_programmer', 'observer'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export const ORG_ROLES = ['owner', 'department_admin', 'editor', 'viewer'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

/** How many departments one department_admin grant may cover. */
export const MAX_SCOPED_DEPARTMENTS = 100;

/** One org role a user holds, with the departments it covers (only department_admin has any). */
export type Grant = { role: OrgRole; scopedDepartments: string[] };
