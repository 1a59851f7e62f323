// The UserResponse representation: how users are read (one, a keyset page) and locked for a mutation.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlRows } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import type { Role } from '../auth/guards.ts';
import type { OrgRole } from './orgRoles.ts';

/** The wire shape, in the schema's key order, so an ETag computed here equals the one GET sends. */
export type UserView = {
  id: string;
  username: string;
  role: Role;
  must_change_password: boolean;
  org_roles: OrgRole[];
  scoped_departments: string[];
  created_at: string;
  updated_at: string;
};

type ViewRow = {
  id: string;
  username: string;
  role: Role;
  must_change_password: boolean;
  org_roles: OrgRole[] | null;
  scoped_departments: string[] | null;
  created_at: string | Date;
  updated_at: string | Date;
};

// Org roles come from correlated subqueries, so a page costs one round trip however many users it holds.
const VIEW_COLUMNS = `u.id::text as id, u.username, u.role, u.must_change_password, u.created_at, u.updated_at,
  array(select r.role::text from user_org_roles r where r.user_id = u.id) as org_roles,
  array(select d from user_org_roles r cross join lateral unnest(r.scoped_departments) as d where r.user_id = u.id) as scoped_departments`;

// User ids are UUIDs; anything else can name no user, and must not reach a uuid cast (that would be a 500).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUserId(id: string): boolean {
  return UUID.test(id);
}

export function toView(row: ViewRow): UserView {
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    must_change_password: row.must_change_password,
    // Sorted the way auth's orgRolesOf sorts them, so /auth/me and /users agree.
    org_roles: [...(row.org_roles ?? [])].sort(),
    scoped_departments: [...new Set(row.scoped_departments ?? [])].sort(),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** The driver hands timestamptz over as text; the wire wants ISO-8601 UTC with milliseconds. */
export function iso(value: string | Date): string {
  return new Date(value).toISOString();
}

export async function findUserView(em: EntityManager, id: string): Promise<UserView | undefined> {
  if (!isUserId(id)) return undefined;
  const [row] = await sqlRows<ViewRow>(em, `select ${VIEW_COLUMNS} from users u where u.id = ?`, [id]);
  return row ? toView(row) : undefined;
}

/**
 * Locks the user's row for the rest of the transaction, then reads the representation. Every mutation of a
 * user takes this lock first, so org-role changes, role changes and deletion of one user are serialised and
 * If-Match is compared with what is really there. The read is a separate statement on purpose: under READ
 * COMMITTED it gets a fresh snapshot after the lock wait, which a subquery of the locking statement would not.
 */
export async function lockUserView(tx: EntityManager, id: string): Promise<UserView> {
  if (!isUserId(id)) throw ApiError.notFound('user not found');
  const locked = await sqlRows(tx, 'select id from users where id = ? for update', [id]);
  if (locked.length === 0) throw ApiError.notFound('user not found');
  const view = await findUserView(tx, id);
  if (!view) throw ApiError.notFound('user not found');
  return view;
}

/** One page in the documented order (created_at, id), starting after `after` when given. */
export async function userPageRows(em: EntityManager, after: { createdAt: string; id: string } | null, fetch: number): Promise<UserView[]> {
  const rows = after
    ? await sqlRows<ViewRow>(
        em,
        `select ${VIEW_COLUMNS} from users u where (u.created_at, u.id) > (?::timestamptz, ?::uuid) order by u.created_at, u.id limit ?`,
        [after.createdAt, after.id, fetch],
      )
    : await sqlRows<ViewRow>(em, `select ${VIEW_COLUMNS} from users u order by u.created_at, u.id limit ?`, [fetch]);
  return rows.map(toView);
}
