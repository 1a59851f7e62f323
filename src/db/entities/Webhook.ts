// Outbound webhooks (CONTRACT §4.12): where events are POSTed, which ones, the signing secret, and whether it is on.
import { defineEntity, p } from '@mikro-orm/core';
import type { WebhookEventType } from '../../contracts/webhooks.ts';

export const WebhookSchema = defineEntity({
  name: 'Webhook',
  tableName: 'webhooks',
  properties: {
    id: p.uuid().primary(),
    url: p.string().length(2048),
    eventTypes: p.array<WebhookEventType>().columnType('text[]'),
    description: p.string().length(500).nullable(),
    enabled: p.boolean(),
    disabledReason: p.string().length(64).nullable(),
    /** Deliveries that ended `failed` since the last one that succeeded (WEBHOOK_DISABLE_AFTER turns the webhook off). */
    consecutiveFailures: p.integer(),
    /**
     * The signing secret itself (`whsec_…`): every attempt signs with it, so it cannot be kept as a hash. The API
     * shows it only when it is made (create, rotate).
     */
    secret: p.string().length(64),
    createdAt: p.datetime(3),
    updatedAt: p.datetime(3),
    /** Username of whoever created it, copied so that it still reads after that account is deleted. */
    createdBy: p.string().length(128),
  },
  indexes: [
    // The list is newest first.
    { name: 'webhooks_created_at_id_idx', expression: `create index "webhooks_created_at_id_idx" on "webhooks" ("created_at" desc, "id" desc)` },
  ],
});
export class Webhook extends WebhookSchema.class {}
WebhookSchema.setClass(Webhook);
