// recordEvent: writes a live event to the outbox inside the transaction of the change it describes (CONTRACT §4.8).
import type { EntityManager } from '@mikro-orm/postgresql';
import { definitionOf, type EventDataInput, type EventType, type PrivateEventType } from '../contracts/events.ts';
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
};

/**
 * Records `event` in the outbox through `em`, which must be inside the transaction of the change: the event
 * then exists if and only if that transaction commits. Right after the commit this instance publishes it
 * (gives it its id and wakes every instance); nothing else is needed from the caller.
 * Events of a user-private type (`session.revoked`) name their `audience`, the one user who receives them.
 */
export async function recordEvent<T extends PrivateEventType>(em: EntityManager, event: Recorded<T> & { audience: string }): Promise<void>;
export async function recordEvent<T extends PublicEventType>(em: EntityManager, event: Recorded<T>): Promise<void>;
export async function recordEvent(em: EntityManager, event: Recorded<EventType> & { audience?: string }): Promise<void> {
  // Typed `any` by the ORM; only its identity matters here.
  const transaction: unknown = em.getTransactionContext();
  if (!em.isInTransaction() || typeof transaction !== 'object' || transaction === null) throw new Error(`recordEvent(${event.type}) must run inside the transaction of the change it records`);
  const definition = definitionOf(event.type);
  const audience = event.audience ?? null;
  if (definition.audience === 'user' && audience === null) throw new Error(`${event.type} events need an audience (the user who receives them)`);
  await insertEvent(em, {
    type: event.type,
    channel: definition.channel,
    occurredAt: event.at ?? new Date(),
    actor: event.actor,
    audienceUserId: definition.audience === 'user' ? audience : null,
    data: definition.data.parse(event.data),
  });
  recording.add(transaction);
}
