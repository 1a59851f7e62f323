// The raw ceilings' bearer lookup: token → session → user in one statement on a plain pg pool, nothing of ours around it.
// Its own module, so the raw ceiling's process (bench/rawCeiling.ts) loads pg and this, not the service's modules.
import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * The same lookup the service makes for a bearer token (services/auth/store.ts): the session's user with its org
 * roles as one JSON subquery, so the user is whole after one round trip.
 */
export const RAW_SESSION_LOOKUP =
  'select u.id, u.username, u.role, u.must_change_password, u.mfa_enabled, (select coalesce(json_agg(agg), \'[]\') from (select r.role as role, r.scoped_departments as "scopedDepartments" from user_org_roles r where r.user_id = s.user_id order by r.role) as agg) as grants from sessions s join users u on u.id = s.user_id where s.token_hash = $1 and s.revoked_at is null and s.expires_at > now()';

export type RawGrant = { role: string; scopedDepartments: string[] };
export type RawUser = { id: string; username: string; role: string; must_change_password: boolean; mfa_enabled: boolean; grants: RawGrant[] };

/**
 * The signed-in user of a raw route's request, or null (then the route answers 401). With `prepared`, the
 * statement runs as one of pg's named statements, planned once per connection as the service's own lookup is.
 */
export async function rawUser(pool: pg.Pool, authorization: string | undefined, opts: { prepared?: boolean } = {}): Promise<RawUser | null> {
  const token = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
  if (!token) return null;
  const values = [createHash('sha256').update(token).digest('hex')];
  const { rows } = await pool.query<RawUser>(opts.prepared ? { name: 'raw_session_lookup', text: RAW_SESSION_LOOKUP, values } : { text: RAW_SESSION_LOOKUP, values });
  return rows[0] ?? null;
}
