// recordEvent: writes a change's live event to the outbox and its audit entry, inside the transaction of that change (CONTRACT §4.8, §4.13).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { z } from 'zod';
import { auditOnlyDefinitionOf, eventTargetOf, isAuditOnlyType, type AuditOnlyDefinitionOf, type AuditOnlyType, type AuditTarget } from '../contracts/audit.ts';
import { definitionOf, type EventDataInput, type EventType, type PrivateEventType } from '../contracts/events.ts';
import { currentOrigin, type Origin } from '../services/audit/origin.ts';
import { insertAuditEntry, type NewAuditEntry } from '../services/audit/store.ts';
import { queueWebhookDeliveries } from '../services/webhooks/outbox.ts';
import { insertEvent } from './store.ts';

type PublicEventType = Exclude<EventType, PrivateEventType>;

/** Transactions (MikroORM transaction contexts) that recorded events: their commit triggers a publication. */
const recording = new WeakSet<object>();

/** Whether `transaction` recorded events (the events runtime publishes after such a commit). */
export function recordedEventsIn(transaction: object): boolean {
  return recording.has(transaction);
}

type Recorded<T extends EventType> = {
  type: T;
  /** Username of whoever made the change; null for the system (e.g. the expiry sweep). */
  actor: string | null;
  /** The resource exactly as its endpoint returns it (validated and stripped by the catalogue's schema). */
  data: EventDataInput<T>;
  /** When the change was made (pass the service's clock); now by default. */
  at?: Date;
  /**
   * How the change came about beyond the actor's name (actor type, API key, client address, request), for its
   * audit entry: the running call's (services/audit/origin.ts) unless given.
   */
  origin?: Origin;
};

/** A change the audit log records with no live event (auth.*, api_key.*, admin.*, …): it names what it is about. */
type RecordedAuditOnly<T extends AuditOnlyType> = {
  type: T;
  /** Username of whoever made the change; null when nobody is known (a failed login, an operator). */
  actor: string | null;
  target: AuditTarget;
  /** Parsed by the type's schema (contracts/audit.ts), which keeps only the fields it lists. */
  data: z.input<AuditOnlyDefinitionOf<T>['data']>;
  at?: Date;
  origin?: Origin;
};

function isAuditOnly(event: Recorded<EventType> | RecordedAuditOnly<AuditOnlyType>): event is RecordedAuditOnly<AuditOnlyType> {
  return isAuditOnlyType(event.type);
}

/**
 * Records `event` in the outbox and in the audit log through `em`, which must be inside the transaction of
 * the change, and queues its webhook deliveries there too: all of them exist if and only if that transaction
 * commits. Right after the commit this instance publishes the event (gives it its id and wakes every
 * instance); nothing else is needed from the caller.
 * Events of a user-private type (`session.revoked`) name their `audience`, the one user who receives them.
 * Changes the audit log records without a live event (contracts/audit.ts) come through here too.
 */
export async function recordEvent<T extends PrivateEventType>(em: EntityManager, event: Recorded<T> & { audience: string }): Promise<void>;
export async function recordEvent<T extends PublicEventType>(em: EntityManager, event: Recorded<T>): Promise<void>;
export async function recordEvent<T extends AuditOnlyType>(em: EntityManager, entry: RecordedAuditOnly<T>): Promise<void>;
export async function recordEvent(em: EntityManager, event: (Recorded<EventType> & { audience?: string }) | RecordedAuditOnly<AuditOnlyType>): Promise<void> {
  // Typed `any` by the ORM; only its identity matters here.
  const transaction: unknown = em.getTransactionContext();
  if (!em.isInTransaction() || typeof transaction !== 'object' || transaction === null) throw new Error(`recordEvent(${event.type}) must run inside the transaction of the change it records`);
  const occurredAt = event.at ?? new Date();
  if (isAuditOnly(event)) {
    await appendAuditEntry(em, event, occurredAt, event.target, auditOnlyDefinitionOf(event.type).data.parse(event.data));
    return;
  }
  const definition = definitionOf(event.type);
  const audience = event.audience ?? null;
  if (definition.audience === 'user' && audience === null) throw new Error(`${event.type} events need an audience (the user who receives them)`);
  const data = definition.data.parse(event.data);
  const channel = definition.channel;
  // The one place where events leave the service (CONTRACT §4.12): private ones (a user's own session ends) never do.
  const deliverable = definition.audience === 'all';
  const { rowId, webhookIds } = await insertEvent(
    em,
    { type: event.type, channel, occurredAt, actor: event.actor, audienceUserId: definition.audience === 'user' ? audience : null, data },
    auditEntryOf(event, occurredAt, eventTargetOf(event.type, data), data),
    deliverable,
  );
  if (webhookIds.length > 0) await queueWebhookDeliveries(em, { rowId, type: event.type, channel, occurredAt }, webhookIds);
  recording.add(transaction);
}

async function appendAuditEntry(
  em: EntityManager,
  event: { type: string; actor: string | null; origin?: Origin | undefined },
  occurredAt: Date,
  target: AuditTarget,
  data: Record<string, unknown>,
): Promise<void> {
  await insertAuditEntry(em, auditEntryOf(event, occurredAt, target, data));
}

/** The audit entry of a change: what it is, who made it, and how (the running call's origin unless given). */
function auditEntryOf(
  event: { type: string; actor: string | null; origin?: Origin | undefined },
  occurredAt: Date,
  target: AuditTarget,
  data: Record<string, unknown>,
): NewAuditEntry {
  const origin = event.origin ?? currentOrigin();
  return {
    occurredAt,
    type: event.type,
    actor: event.actor,
    actorType: origin.actorType,
    apiKeyId: origin.apiKeyId,
    ipAddress: origin.ip,
    requestId: origin.requestId,
    targetType: target?.type ?? null,
    targetId: target?.id ?? null,
    data,
  };
}
