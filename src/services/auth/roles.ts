// The user roles of CONTRACT §3.1 (one per user).
export const ROLES = ['ceo', 'manager', 'board_member', 'pair_programmer', 'observer'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
