// The deliveries of a recorded event (CONTRACT §4.12): one per enabled webhook it matches, queued in the event's own transaction.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { jobSenderOf } from '../../jobs/senders.ts';
import { queueAttempt } from './queueing.ts';
import { insertDeliveries } from './store.ts';

export type RecordedEvent = { rowId: number; type: string; channel: string; occurredAt: Date };

/**
 * Called by recordEvent for a public event, inside the transaction of the change, with the enabled webhooks
 * subscribed to its type (or its channel's `.*`), read by the statement that wrote the event: for each a
 * pending delivery and the job of its first attempt, so both exist if and only if the change commits and none is lost in between. The body is fixed by
 * that first attempt, once the event has its public id (given after the commit).
 */
export async function queueWebhookDeliveries(em: EntityManager, event: RecordedEvent, webhookIds: readonly string[]): Promise<void> {
  if (webhookIds.length === 0) return;
  const jobs = jobSenderOf(em);
  // Every service and job runner starts a queue for its ORM; only a bare script could get here without one.
  if (jobs === null) throw new Error(`no job queue to deliver ${event.type} to its webhooks: start one on this database (JobQueue.start)`);
  const deliveries = webhookIds.map((webhookId) => ({
    id: randomUUID(),
    webhookId,
    eventRowId: event.rowId,
    eventId: null,
    eventType: event.type,
    body: null,
    status: 'pending' as const,
    attempts: 0,
    lastAttemptAt: null,
    nextAttemptAt: event.occurredAt,
    responseStatus: null,
    error: null,
    createdAt: event.occurredAt,
    succeededAt: null,
    attemptJobId: null,
  }));
  await insertDeliveries(em, deliveries);
  for (const delivery of deliveries) await queueAttempt(jobs, em, delivery);
}
