// Authentication and role checks used by the procedure tiers.
import type { Actor, Context } from '../../context/index.ts';
import { ApiError } from '../../errors.ts';

export const ROLES = ['ceo', 'manager', 'board_member', 'pair_programmer', 'observer'] as const;
export type Role = (typeof ROLES)[number];

export async function authenticate(ctx: Context, _opts: { mutation: boolean; allowPendingPasswordChange: boolean }): Promise<Actor> {
  if (ctx.actor) return ctx.actor;
  throw ApiError.unauthorized();
}

export function requireRole(actor: Actor, roles: readonly Role[]): void {
  if (!(roles as readonly string[]).includes(actor.role)) throw ApiError.forbidden();
}
