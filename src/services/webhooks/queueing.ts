// The webhook delivery queue as senders see it: its name and payload, and how an attempt is queued (the runner is delivery.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { JobQueueName, JobSender } from '../../jobs/jobType.ts';

/**
 * One job is one attempt: of the delivery `delivery_id`, expected to have made `attempts` attempts so far (a
 * job whose attempt another job already made ends without one).
 */
export const DeliveryJobPayload = z.strictObject({ delivery_id: z.uuid(), attempts: z.int().nonnegative() });
export type DeliveryJobPayload = z.infer<typeof DeliveryJobPayload>;

export const WEBHOOK_DELIVERY_QUEUE: JobQueueName<DeliveryJobPayload> = { name: 'webhooks.deliver', payload: DeliveryJobPayload };

/**
 * Queues the next attempt of a delivery, inside `em`'s transaction (the job exists if and only if it commits),
 * now or `startAfterS` seconds from now.
 */
export async function queueAttempt(jobs: JobSender, em: EntityManager, delivery: { id: string; attempts: number }, startAfterS?: number): Promise<void> {
  const options = startAfterS === undefined ? { em } : { em, startAfter: startAfterS };
  await jobs.send(WEBHOOK_DELIVERY_QUEUE, { delivery_id: delivery.id, attempts: delivery.attempts }, options);
}
