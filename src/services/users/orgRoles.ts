// Granting and revoking organization roles, under the user's row lock and the last-owner rule.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors.ts';
import { recordEvent } from '../../events/record.ts';
import type { UserResponse } from '../../contracts/users.ts';
import { assertIfMatch } from '../etag.ts';
import type { OrgRole } from '../../contracts/roles.ts';
import { assertNotLastOwner, normaliseDepartments } from './grants.ts';
import * as store from './store.ts';
import { lockUserResponse } from './users.ts';
import type { Clock } from '../../contracts/clock.ts';
import type { Actor } from '../../contracts/actor.ts';

export type GrantOrgRoleInput = {
  user_id: string;
  role: OrgRole;
  scoped_departments?: string[] | null | undefined;
  ifMatch?: string | undefined;
};

export async function grantOrgRole({ em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor }, input: GrantOrgRoleInput): Promise<UserResponse> {
  const departments = normaliseDepartments(input.role, input.scoped_departments);
  return em.transactional(async (tx) => {
    const current = await lockUserResponse(tx, input.user_id);
    assertIfMatch(input.ifMatch, current);
    // The primary key (user_id, role) refuses a role already held (409/4001 through errors.ts); a grant
    // racing this one on the same user waits on the user lock.
    const now = clock.now();
    await store.insertGrant(tx, { userId: input.user_id, role: input.role, scopedDepartments: departments, createdAt: now });
    await store.touchUser(tx, input.user_id, now);
    const updated = await lockUserResponse(tx, input.user_id);
    await recordEvent(tx, { type: 'user.updated', actor: actor.username, at: now, data: updated });
    return updated;
  });
}

export type RevokeOrgRoleInput = { user_id: string; role: OrgRole; ifMatch?: string | undefined };

export async function revokeOrgRole({ em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor }, input: RevokeOrgRoleInput): Promise<void> {
  await em.transactional(async (tx) => {
    const current = await lockUserResponse(tx, input.user_id);
    assertIfMatch(input.ifMatch, current);
    if (input.role === 'owner') assertNotLastOwner(await store.lockOwners(tx), input.user_id, 'cannot revoke the last owner');
    if (!(await store.deleteGrant(tx, input.user_id, input.role))) throw ApiError.notFound(`the user does not hold the org role ${input.role}`);
    const now = clock.now();
    await store.touchUser(tx, input.user_id, now);
    // The endpoint answers 204; the event carries the user as GET /users/{id} now returns it.
    await recordEvent(tx, { type: 'user.updated', actor: actor.username, at: now, data: await lockUserResponse(tx, input.user_id) });
  });
}
