// The audit log's vocabulary (CONTRACT §4.13): every entry type with its data, AuditEntry, and the filters of GET /audit.
import { z } from 'zod';
import { EVENT_TYPES, type EventDefinition, type EventType } from './events.ts';
import { page, pageQueryShape } from './pagination.ts';

/** Who made a change: a person or program signed in (`user`), an API key, the service itself, or an operator at the console. */
export const ACTOR_TYPES = ['user', 'api_key', 'system', 'admin'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** What an entry is about: a kind of resource and its id (null for the one of its kind, e.g. the company). */
export type AuditTarget = { type: string; id: string | null } | null;

/** The longest username the audit keeps of a failed login, as sent. */
export const MAX_AUDIT_USERNAME_LENGTH = 128;

/** Why a login was refused: told here for the audit's readers, never to whoever tried (CONTRACT §3.4). */
export const LOGIN_FAILURE_REASONS = ['unknown_user', 'wrong_password', 'service_account', 'temporary_password_expired', 'one_time_code_required', 'invalid_one_time_code'] as const;
export type LoginFailureReason = (typeof LOGIN_FAILURE_REASONS)[number];

/** The operators' commands (`npm run admin -- <command>`); each is recorded as `admin.<command>`. */
export const ADMIN_COMMANDS = ['reset-password', 'list-users', 'revoke-sessions', 'revoke-api-keys', 'reset-mfa'] as const;
export type AdminCommand = (typeof ADMIN_COMMANDS)[number];

const Timestamp = z.iso.datetime({ precision: 3 });
const Operator = z.string().describe('The operating-system account that ran the command.');

function auditType<const T extends string, S extends z.ZodType>(type: T, data: S, description: string) {
  return { type, data, description };
}

/**
 * Entry types recorded in the audit log only (every live event of CONTRACT §4.8 is recorded too, with the
 * event's own data). Each `data` schema lists exactly what is kept: recording parses through it, so a field
 * not listed here (a password, a token, a key) never reaches an entry. A later area adds its types here
 * (webhook.*, mfa.*) and records them with recordEvent like any other.
 */
export const AUDIT_ONLY_DEFINITIONS = [
  auditType('auth.setup', z.object({ user_id: z.string(), username: z.string(), session_id: z.string() }), 'First-run setup created the CEO and signed them in.'),
  auditType('auth.login_succeeded', z.object({ session_id: z.string(), user_agent: z.string().nullable() }), 'A user signed in with a password.'),
  auditType(
    'auth.login_failed',
    z.object({
      username: z.string().max(MAX_AUDIT_USERNAME_LENGTH).describe('The username as sent, cut to 128 characters.'),
      reason: z.enum(LOGIN_FAILURE_REASONS),
      user_agent: z.string().nullable(),
    }),
    'A login was refused (401); recorded although the request failed.',
  ),
  auditType('auth.logout', z.object({ session_id: z.string() }), 'A user signed out, ending a session.'),
  auditType('auth.password_changed', z.object({ sessions_revoked: z.int() }), 'A user changed their own password (their other sessions ended).'),
  auditType(
    'api_key.created',
    z.object({
      name: z.string(),
      prefix: z.string(),
      user_id: z.string(),
      username: z.string(),
      scopes: z.array(z.string()),
      expires_at: Timestamp.nullable(),
    }),
    'An API key was issued (its secret is never recorded).',
  ),
  auditType('api_key.revoked', z.object({ name: z.string(), prefix: z.string(), user_id: z.string(), username: z.string() }), 'An API key was revoked.'),
  auditType('admin.reset-password', z.object({ username: z.string(), sessions_revoked: z.int(), operator: Operator }), 'An operator gave a user a temporary password.'),
  auditType('admin.list-users', z.object({ users: z.int(), operator: Operator }), 'An operator listed the users.'),
  auditType('admin.revoke-sessions', z.object({ username: z.string(), sessions_revoked: z.int(), operator: Operator }), "An operator ended a user's sessions."),
  auditType('admin.revoke-api-keys', z.object({ username: z.string(), keys_revoked: z.int(), operator: Operator }), "An operator revoked a user's API keys."),
  auditType('admin.reset-mfa', z.object({ username: z.string(), operator: Operator }), "An operator turned off a user's two-factor authentication."),
  auditType('mfa.enabled', z.object({ username: z.string() }), 'A user confirmed a TOTP key: two-factor authentication is on and ten recovery codes were issued.'),
  auditType(
    'mfa.disabled',
    z.object({ username: z.string(), code_kind: z.enum(['totp', 'recovery_code']).describe('The kind of code given with the password (never the code itself).') }),
    'A user turned off their own two-factor authentication with the password and a code.',
  ),
  auditType('mfa.recovery_codes_regenerated', z.object({ username: z.string() }), "A user replaced their recovery codes (the old ones stopped working)."),
  auditType('mfa.reset', z.object({ username: z.string() }), "The CEO turned off a user's two-factor authentication (DELETE /users/{user_id}/mfa)."),
  auditType(
    'webhook.created',
    z.object({ url: z.string(), event_types: z.array(z.string()), description: z.string().nullable(), enabled: z.boolean() }),
    'A webhook was created (its secret is never recorded).',
  ),
  auditType(
    'webhook.updated',
    z.object({ url: z.string(), event_types: z.array(z.string()), description: z.string().nullable(), enabled: z.boolean() }),
    'A webhook was changed (PATCH /webhooks/{webhook_id}); the data is the webhook after the change.',
  ),
  auditType('webhook.deleted', z.object({ url: z.string() }), 'A webhook was deleted, with its deliveries.'),
  auditType('webhook.secret_rotated', z.object({ url: z.string() }), "A webhook's signing secret was replaced (the old one stopped signing at once)."),
  auditType(
    'webhook.disabled',
    z.object({ url: z.string(), reason: z.enum(['endpoint answered 410', 'too many failed deliveries']) }),
    'The service turned a webhook off by itself (its endpoint answered 410, or too many deliveries in a row failed).',
  ),
] as const;

type AuditOnlyDefinition = (typeof AUDIT_ONLY_DEFINITIONS)[number];
export type AuditOnlyType = AuditOnlyDefinition['type'];
export type AuditOnlyDefinitionOf<T extends AuditOnlyType> = Extract<AuditOnlyDefinition, { type: T }>;
/** Every type an entry can have. */
export type AuditType = EventType | AuditOnlyType;

export const AUDIT_ONLY_TYPES = AUDIT_ONLY_DEFINITIONS.map((d) => d.type);
export const AUDIT_TYPES: readonly AuditType[] = [...EVENT_TYPES, ...AUDIT_ONLY_TYPES];

export function isAuditOnlyType(type: AuditType): type is AuditOnlyType {
  return (AUDIT_ONLY_TYPES as readonly string[]).includes(type);
}

export function auditOnlyDefinitionOf<T extends AuditOnlyType>(type: T): AuditOnlyDefinitionOf<T>;
export function auditOnlyDefinitionOf(type: AuditOnlyType): AuditOnlyDefinition {
  const found = AUDIT_ONLY_DEFINITIONS.find((d) => d.type === type);
  if (!found) throw new Error(`unknown audit entry type ${type}`);
  return found;
}

type EventData<T extends EventType> = z.output<EventDefinition<T>['data']>;

/** What each live event is about, read from its data (the audit-only types name their target when recorded). */
const EVENT_TARGETS: { [T in EventType]: (data: EventData<T>) => AuditTarget } = {
  'approval.created': (d) => ({ type: 'approval', id: d.id }),
  'approval.approved': (d) => ({ type: 'approval', id: d.id }),
  'approval.rejected': (d) => ({ type: 'approval', id: d.id }),
  'approval.expired': (d) => ({ type: 'approval', id: d.id }),
  'review.stage_decided': (d) => ({ type: 'task', id: d.task_id }),
  'user.created': (d) => ({ type: 'user', id: d.id }),
  'user.updated': (d) => ({ type: 'user', id: d.id }),
  'user.deleted': (d) => ({ type: 'user', id: d.id }),
  'setup.company_created': () => ({ type: 'company', id: null }),
  'setup.agent_created': (d) => ({ type: 'agent', id: String(d.agent_index) }),
  'setup.agent_updated': (d) => ({ type: 'agent', id: String(d.agent_index) }),
  'setup.locales_updated': () => ({ type: 'name_locales', id: null }),
  'setup.completed': () => ({ type: 'setup', id: null }),
  'session.revoked': (d) => ({ type: 'session', id: d.session_id }),
};

export function eventTargetOf<T extends EventType>(type: T, data: EventData<T>): AuditTarget {
  const target: (data: EventData<T>) => AuditTarget = EVENT_TARGETS[type];
  return target(data);
}

export const AuditEntry = z
  .object({
    id: z.string().describe('A decimal sequence number.'),
    occurred_at: Timestamp.describe('When the change was made.'),
    type: z.string().describe('What happened, e.g. `approval.approved`, `auth.login_failed` (docs/audit.md lists every type).'),
    actor: z.string().nullable().describe('Username of whoever made the change; null for the system, an operator, or a failed login.'),
    actor_type: z.enum(ACTOR_TYPES).describe('`user` (a session or an anonymous request such as a login), `api_key`, `system`, `admin` (npm run admin).'),
    api_key_id: z.string().nullable().describe('The API key the request was made with, if any.'),
    ip_address: z.string().nullable().describe('The client address (after TRUST_PROXY); null outside a request.'),
    request_id: z.string().nullable().describe('The X-Request-Id of the request that made the change; null outside a request.'),
    target_type: z.string().nullable().describe('What the entry is about: `approval`, `user`, `session`, `task`, `agent`, `api_key`, …'),
    target_id: z.string().nullable(),
    data: z.record(z.string(), z.unknown()).describe('The details of the change (docs/audit.md); never a password, token, key, secret, hash or one-time code.'),
  })
  .meta({ id: 'AuditEntry' });
export type AuditEntry = z.infer<typeof AuditEntry>;

/** The longest `type` filter: as long as the longest type can be. */
export const MAX_AUDIT_TYPE_LENGTH = 64;

const DateTime = z.iso.datetime({ offset: true });

/** The filters GET /audit and GET /audit/export share. */
const filterShape = {
  type: z
    .string()
    .min(1)
    .max(MAX_AUDIT_TYPE_LENGTH)
    .nullish()
    .describe('An entry type (`auth.login_failed`), or a prefix ending in `.` for every type under it (`auth.`).'),
  actor: z.string().min(1).max(128).nullish().describe('Username of the actor, exactly as entries show it.'),
  target_id: z.string().min(1).max(128).nullish().describe('Id of what the entries are about (a user, approval, session, task, …).'),
  since: DateTime.nullish().describe('Entries at or after this time (ISO 8601 date-time).'),
  until: DateTime.nullish().describe('Entries before this time (ISO 8601 date-time).'),
};

export const ListAuditInput = z.strictObject({ ...filterShape, ...pageQueryShape });
export type ListAuditInput = z.infer<typeof ListAuditInput>;
export const AuditPage = page(AuditEntry);

export const ExportAuditInput = z.strictObject(filterShape);
export type AuditFilters = z.infer<typeof ExportAuditInput>;
