// The ceiling of bench:auth and bench:users in a process of its own: raw Fastify + pg doing what the service does
// for `/auth/me` and a first users page, on the service's database. Started by startRawCeiling() in bench/lib.ts.
import Fastify from 'fastify';
import pg from 'pg';
import { z } from 'zod';
import { encodeCursor } from '../src/services/pagination.ts';
import { rawUser, type RawGrant } from './rawSession.ts';

const Settings = z.object({ databaseUrl: z.string(), port: z.number(), secret: z.string(), usersList: z.string() });
export type RawCeilingSettings = z.infer<typeof Settings>;

// Hand-written on purpose: a ceiling uses nothing of ours. The text is what services/users/store.ts sends for a first
// page (LIMIT 51: one row more than the page tells whether there is a next one): the columns the response needs,
// each under its property name, the timestamps as ISO text made by PostgreSQL.
const FIRST_USERS_PAGE =
  'select "users"."id" as "id", "users"."username" as "username", "users"."role" as "role", "users"."kind" as "kind", "users"."must_change_password" as "mustChangePassword", "users"."mfa_enabled" as "mfaEnabled", to_char("users"."created_at" at time zone \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\') as "createdAt", to_char("users"."updated_at" at time zone \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\') as "updatedAt", coalesce((select json_agg(json_build_object(\'role\', "r"."role", \'scopedDepartments\', "r"."scoped_departments") order by "r"."role") as "grants" from "user_org_roles" as "r" where "r"."user_id" = "users"."id"), \'[]\') as "grants" from "users" order by "users"."created_at", "users"."id" limit $1';
const PAGE = 50;

type UserRow = { id: string; username: string; role: string; kind: string; mustChangePassword: boolean; mfaEnabled: boolean; createdAt: string; updatedAt: string; grants: RawGrant[] };

/** A user's org roles and departments as the service's user representation lists them. */
function summarise(grants: readonly RawGrant[]): { org_roles: string[]; scoped_departments: string[] } {
  return { org_roles: grants.map((g) => g.role).sort(), scoped_departments: [...new Set(grants.flatMap((g) => g.scopedDepartments))].sort() };
}

/** The service's success envelope. */
function envelope<T>(data: T) {
  return { data, error: null, error_detail: null, success: true };
}

const settings = Settings.parse(JSON.parse(process.env.BENCH_RAW ?? 'null'));
const secret = Buffer.from(settings.secret, 'utf8');
// As large as the service's pool (DB_POOL_MAX's default); statements named, so each connection plans them
// once, as the service's prepared statements are.
const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: 20 });
const app = Fastify();

app.get('/ready', async () => ({ ready: true }));

// The bearer lookup and the service's body for it.
app.get('/me', async (req, reply) => {
  const user = await rawUser(pool, req.headers.authorization, { prepared: true });
  if (!user) return reply.code(401).send({ error: 'unauthorized' });
  return envelope({ id: user.id, username: user.username, role: user.role, kind: 'human', must_change_password: user.must_change_password, mfa_enabled: user.mfa_enabled, ...summarise(user.grants) });
});

// The bearer lookup, the page's statement, and the service's envelope with a signed cursor.
app.get('/users', async (req, reply) => {
  if (!(await rawUser(pool, req.headers.authorization, { prepared: true }))) return reply.code(401).send({ error: 'unauthorized' });
  const { rows } = await pool.query<UserRow>({ name: 'raw_first_users_page', text: FIRST_USERS_PAGE, values: [PAGE + 1] });
  const page = rows.slice(0, PAGE);
  const last = page.at(-1);
  const hasMore = rows.length > PAGE;
  return {
    ...envelope(
      page.map((u) => ({
        id: u.id,
        username: u.username,
        role: u.role,
        kind: u.kind,
        must_change_password: u.mustChangePassword,
        mfa_enabled: u.mfaEnabled,
        ...summarise(u.grants),
        created_at: u.createdAt,
        updated_at: u.updatedAt,
      })),
    ),
    pagination: {
      limit: PAGE,
      next_cursor: hasMore && last ? encodeCursor(secret, settings.usersList, [last.createdAt, last.id]) : null,
      has_more: hasMore,
    },
  };
});

await app.listen({ port: settings.port, host: '127.0.0.1' });
// A clean exit on SIGTERM, so that a profile asked for with --cpu-prof is written.
process.once('SIGTERM', () => {
  void app
    .close()
    .then(() => pool.end())
    .then(() => process.exit(0));
});
