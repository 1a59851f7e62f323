// The audit log (CONTRACT §4.13): an append-only record of who did what, written in the transaction of each change.
import { defineEntity, p } from '@mikro-orm/core';
import { ACTOR_TYPES, type ActorType } from '../../contracts/audit.ts';

const sqlList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

export const AuditEntrySchema = defineEntity({
  name: 'AuditEntry',
  tableName: 'audit_entries',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    occurredAt: p.datetime(3),
    type: p.string().length(64),
    /** The type up to its first dot (`auth` of `auth.login_failed`): what a prefix filter (`type=auth.`) reads from its own index. */
    category: p.string().length(64),
    /** Username at the time of the change; null for the system, an operator, or a failed login. */
    actor: p.string().length(128).nullable(),
    actorType: p.string().length(16).$type<ActorType>(),
    // No foreign keys: an entry outlives the key, user or approval it names.
    apiKeyId: p.uuid().nullable(),
    ipAddress: p.text().nullable(),
    requestId: p.string().length(128).nullable(),
    targetType: p.string().length(32).nullable(),
    targetId: p.string().length(128).nullable(),
    data: p.json<Record<string, unknown>>().columnType('jsonb'),
  },
  indexes: [
    // Every list is newest first by (occurred_at, id); each filter has an index that yields that order, so a
    // page reads its rows and stops, however many entries match (docs/audit.md shows the plans).
    { name: 'audit_entries_occurred_at_id_idx', expression: `create index "audit_entries_occurred_at_id_idx" on "audit_entries" ("occurred_at" desc, "id" desc)` },
    { name: 'audit_entries_type_idx', expression: `create index "audit_entries_type_idx" on "audit_entries" ("type", "occurred_at" desc, "id" desc)` },
    { name: 'audit_entries_category_idx', expression: `create index "audit_entries_category_idx" on "audit_entries" ("category", "occurred_at" desc, "id" desc)` },
    {
      name: 'audit_entries_actor_idx',
      expression: `create index "audit_entries_actor_idx" on "audit_entries" ("actor", "occurred_at" desc, "id" desc) where "actor" is not null`,
    },
    {
      name: 'audit_entries_target_idx',
      expression: `create index "audit_entries_target_idx" on "audit_entries" ("target_id", "occurred_at" desc, "id" desc) where "target_id" is not null`,
    },
  ],
  checks: [
    { name: 'audit_entries_actor_type_check', expression: `actor_type in (${sqlList(ACTOR_TYPES)})` },
    { name: 'audit_entries_category_check', expression: `category = split_part(type, '.', 1)` },
  ],
  // Append-only in the database too: only retention removes entries, nothing changes one.
  triggers: [{ name: 'audit_entries_append_only', timing: 'before', events: ['update'], forEach: 'row', body: `raise exception 'audit entries are never changed';` }],
});
export class AuditEntry extends AuditEntrySchema.class {}
AuditEntrySchema.setClass(AuditEntry);
