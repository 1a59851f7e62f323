// Schemas of the webhook endpoints (CONTRACT §4.12): WebhookResponse, DeliveryResponse, the strict inputs of webhooks.*, the test event.
import { z } from 'zod';
import { CHANNELS, EVENT_DEFINITIONS, type Channel } from './events.ts';
import { page, pageQueryShape } from './pagination.ts';

/** At most this many webhooks exist at once (CONTRACT §4.12). */
export const MAX_WEBHOOKS = 20;
export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 500;
export const MAX_WEBHOOK_EVENT_TYPES = 30;
/** How the secret starts: the Standard Webhooks format, `whsec_` + base64 of the key bytes. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** Channels whose events leave the service; `sessions` is private to each session's user and never does. */
const PRIVATE_CHANNELS: readonly Channel[] = ['sessions'];
export const WEBHOOK_CHANNELS = CHANNELS.filter((c) => !PRIVATE_CHANNELS.includes(c));

/** What a webhook may subscribe to: every public event type of §4.8, and each public channel as `<channel>.*`. */
export const WEBHOOK_EVENT_TYPES = [
  ...EVENT_DEFINITIONS.filter((d) => !PRIVATE_CHANNELS.includes(d.channel)).map((d) => d.type),
  ...WEBHOOK_CHANNELS.map((c) => `${c}.*` as const),
] as const;
export const WebhookEventType = z
  .enum(WEBHOOK_EVENT_TYPES)
  .describe('An event type of the live events (e.g. `approval.approved`), or every type of a channel as `<channel>.*` (e.g. `approvals.*`); never the private `sessions` channel.');
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/** What a delivery is: queued or retrying, delivered (a 2xx), or given up on. */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export const DeliveryStatus = z.enum(DELIVERY_STATUSES);
export type DeliveryStatus = z.infer<typeof DeliveryStatus>;

/** Why an attempt failed, exactly these words (`HTTP <status>` for any other non-2xx answer). */
export const DELIVERY_ERRORS = ['timeout', 'connection refused', 'destination not allowed', 'redirect not followed', 'connection failed'] as const;
export type DeliveryError = (typeof DELIVERY_ERRORS)[number] | `HTTP ${number}`;

/** Why the service turned a webhook off by itself. */
export const DISABLED_REASONS = ['endpoint answered 410', 'too many failed deliveries'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

const Timestamp = z.iso.datetime({ precision: 3 });
const WebhookIdParam = z.string().min(1).max(128).describe('Id of the webhook.');
const DeliveryIdParam = z.string().min(1).max(128).describe('Id of the delivery (the `webhook-id` header it was sent with).');

/** Parses like the URL the service will POST to, or null. */
function parsedUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

export const WebhookUrl = z
  .string()
  .min(1)
  .max(MAX_WEBHOOK_URL_LENGTH)
  .superRefine((value, ctx) => {
    const url = parsedUrl(value);
    if (url === null) ctx.addIssue({ code: 'custom', message: 'must be an absolute URL' });
    else if (url.protocol !== 'http:' && url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'must be an http or https URL' });
    else if (url.username !== '' || url.password !== '') ctx.addIssue({ code: 'custom', message: 'must not contain a user name or password' });
  })
  .describe(
    `Where deliveries are POSTed: an http or https URL of at most ${MAX_WEBHOOK_URL_LENGTH} characters, without a user name or password. ` +
      'Unless WEBHOOK_ALLOW_PRIVATE, its host must not be or resolve to a loopback, private, link-local, CGNAT or unspecified address.',
  );

const EventTypes = z
  .array(WebhookEventType)
  .min(1)
  .max(MAX_WEBHOOK_EVENT_TYPES)
  .refine((types) => new Set(types).size === types.length, { message: 'must not repeat an event type' })
  .describe(`1..${MAX_WEBHOOK_EVENT_TYPES} distinct event types or \`<channel>.*\`.`);

const Description = z
  .string()
  .max(MAX_WEBHOOK_DESCRIPTION_LENGTH)
  .nullish()
  .describe(`What the webhook is for (at most ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters).`);

export const WebhookResponse = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    url: z.string(),
    event_types: z.array(WebhookEventType),
    description: z.string().nullable(),
    enabled: z.boolean().describe('Whether new events are delivered; a disabled webhook queues nothing new.'),
    disabled_reason: z
      .string()
      .nullable()
      .describe('Why the service turned the webhook off: `endpoint answered 410` or `too many failed deliveries`; null when enabled or turned off by hand.'),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z.string().describe('Username of whoever created the webhook.'),
  })
  .meta({ id: 'WebhookResponse' });
export type WebhookResponse = z.infer<typeof WebhookResponse>;

const Secret = z
  .string()
  .describe('The signing secret (`whsec_` + base64 of 32 random bytes, the Standard Webhooks format): shown in this answer only, never again.');

export const CreatedWebhookResponse = WebhookResponse.extend({ secret: Secret }).meta({ id: 'CreatedWebhookResponse' });
export type CreatedWebhookResponse = z.infer<typeof CreatedWebhookResponse>;

export const WebhookSecretResponse = z.object({ secret: Secret }).meta({ id: 'WebhookSecretResponse' });
export type WebhookSecretResponse = z.infer<typeof WebhookSecretResponse>;

export const DeliveryAccepted = z
  .object({ delivery_id: z.string().meta({ format: 'uuid' }).describe('The delivery queued (its `webhook-id` header).') })
  .meta({ id: 'DeliveryAccepted' });
export type DeliveryAccepted = z.infer<typeof DeliveryAccepted>;

export const DeliveryResponse = z
  .object({
    id: z.string().meta({ format: 'uuid' }).describe('The delivery, sent as the `webhook-id` header in every attempt.'),
    webhook_id: z.string().meta({ format: 'uuid' }),
    event_id: z.string().describe('The `id` of the event delivered (a test delivery has an id of its own).'),
    event_type: z.string().describe('The `type` of the event delivered (`webhook.test` for a test).'),
    status: DeliveryStatus.describe('`pending` (queued, or waiting for its next attempt), `succeeded` (a 2xx answer) or `failed` (given up).'),
    attempts: z.int().nonnegative().describe('Attempts made so far, redeliveries included.'),
    last_attempt_at: Timestamp.nullable(),
    next_attempt_at: Timestamp.nullable().describe('When the next attempt is due while retrying; null otherwise.'),
    response_status: z.int().nullable().describe('HTTP status of the last attempt; null when it got no answer.'),
    error: z
      .string()
      .nullable()
      .describe(
        'Why the last attempt failed: `timeout`, `connection refused`, `destination not allowed`, `redirect not followed`, `HTTP <status>` or `connection failed`; null after a success.',
      ),
    created_at: Timestamp,
    succeeded_at: Timestamp.nullable(),
  })
  .meta({ id: 'DeliveryResponse' });
export type DeliveryResponse = z.infer<typeof DeliveryResponse>;

export const CreateWebhookInput = z
  .strictObject({
    url: WebhookUrl,
    event_types: EventTypes,
    description: Description,
    enabled: z.boolean().optional().describe('Default true.'),
  })
  .meta({ id: 'CreateWebhookRequest' });
export type CreateWebhookInput = z.infer<typeof CreateWebhookInput>;

export const UpdateWebhookInput = z
  .strictObject({
    webhook_id: WebhookIdParam,
    url: WebhookUrl.optional(),
    event_types: EventTypes.optional(),
    description: Description,
    enabled: z.boolean().optional().describe('`true` also clears `disabled_reason` and the count of consecutive failed deliveries.'),
  })
  .meta({ id: 'UpdateWebhookRequest' });
export type UpdateWebhookInput = z.infer<typeof UpdateWebhookInput>;

export const ListWebhooksInput = z.strictObject({ ...pageQueryShape });
export type ListWebhooksInput = z.infer<typeof ListWebhooksInput>;
export const WebhookPage = page(WebhookResponse);

export const WebhookIdInput = z.strictObject({ webhook_id: WebhookIdParam });

export const ListDeliveriesInput = z.strictObject({
  webhook_id: WebhookIdParam,
  status: DeliveryStatus.nullish().describe('Only deliveries in this status.'),
  ...pageQueryShape,
});
export type ListDeliveriesInput = z.infer<typeof ListDeliveriesInput>;
export const DeliveryPage = page(DeliveryResponse);

export const RedeliverInput = z.strictObject({ webhook_id: WebhookIdParam, delivery_id: DeliveryIdParam });
export type RedeliverInput = z.infer<typeof RedeliverInput>;

/** The event a test delivery carries: an id of its own, not from the event sequence. */
export const WebhookTestEvent = z
  .object({
    id: z.string(),
    type: z.literal('webhook.test'),
    channel: z.literal('webhooks'),
    occurred_at: Timestamp,
    actor: z.string().nullable(),
    data: z.object({ webhook_id: z.string() }),
  })
  .meta({ id: 'WebhookTestEvent' });
export type WebhookTestEvent = z.infer<typeof WebhookTestEvent>;
