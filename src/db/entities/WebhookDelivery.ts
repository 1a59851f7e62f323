// One event (or test) to deliver to one webhook (CONTRACT §4.12): its body, fixed at the first attempt, and where its attempts stand.
import { defineEntity, p } from '@mikro-orm/core';
import type { DeliveryStatus } from '../../contracts/webhooks.ts';

export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    /** Also the `webhook-id` header of every attempt. */
    id: p.uuid().primary(),
    // No foreign key (as elsewhere in the schema): a webhook's deliveries are deleted with it, in the same transaction.
    webhookId: p.uuid(),
    /** The outbox row of the event (its `row_id`): the event has no public id until it is published, after its commit. */
    eventRowId: p.bigint('number').nullable(),
    /** The event's public id, copied when the body is fixed (a test delivery's own id from the start). */
    eventId: p.string().length(64).nullable(),
    eventType: p.string().length(64),
    /** The exact bytes POSTed, the same in every attempt: written by the first attempt (a test's at once). */
    body: p.text().nullable(),
    status: p.string().length(16).$type<DeliveryStatus>(),
    attempts: p.integer(),
    lastAttemptAt: p.datetime(3).nullable(),
    nextAttemptAt: p.datetime(3).nullable(),
    responseStatus: p.integer().nullable(),
    error: p.string().length(64).nullable(),
    createdAt: p.datetime(3),
    succeededAt: p.datetime(3).nullable(),
    /** The queue job that made the last attempt: the same job run again (its worker died) may attempt again. */
    attemptJobId: p.uuid().nullable(),
  },
  indexes: [
    // Each webhook's list is newest first, with an optional status filter.
    {
      name: 'webhook_deliveries_webhook_created_at_id_idx',
      expression: `create index "webhook_deliveries_webhook_created_at_id_idx" on "webhook_deliveries" ("webhook_id", "created_at" desc, "id" desc)`,
    },
    // Housekeeping deletes deliveries past their 30 days.
    { name: 'webhook_deliveries_created_at_idx', properties: ['createdAt'] },
    // The queue-depth metric counts pending deliveries at every scrape: an index of those alone.
    {
      name: 'webhook_deliveries_pending_idx',
      expression: `create index "webhook_deliveries_pending_idx" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending'`,
    },
    // The events' purge keeps every event a delivery still has to read its body from.
    {
      name: 'webhook_deliveries_unread_event_idx',
      expression: `create index "webhook_deliveries_unread_event_idx" on "webhook_deliveries" ("event_row_id") where "body" is null`,
    },
  ],
  checks: [{ name: 'webhook_deliveries_status_check', expression: `status in ('pending', 'succeeded', 'failed')` }],
});
export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);
