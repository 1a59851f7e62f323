// webhooks.{create, list, get, update, delete, rotateSecret, test, deliveries, redeliver}: the CEO's outbound webhooks (CONTRACT §4.12). Never open to API keys.
import { ceoProcedure, router } from '../../trpc.ts';
import { NoContent, noContent } from '../noContent.ts';
import * as webhooks from '../../services/webhooks/webhooks.ts';
import {
  CreatedWebhookResponse,
  CreateWebhookInput,
  DeliveryAccepted,
  DeliveryPage,
  ListDeliveriesInput,
  ListWebhooksInput,
  RedeliverInput,
  UpdateWebhookInput,
  WebhookIdInput,
  WebhookPage,
  WebhookResponse,
  WebhookSecretResponse,
} from '../../contracts/webhooks.ts';
import type { Config } from '../../config.ts';

const tags = ['webhooks'];
const NO_WEBHOOK = 'No webhook has this id.';
const DESTINATION = 'The URL\'s host is, or resolves to, a loopback, private, link-local, CGNAT or unspecified address: `webhook destination not allowed` (unless WEBHOOK_ALLOW_PRIVATE).';

const rulesOf = (config: Config) => ({ allowPrivate: config.webhookAllowPrivate });

export const webhooksRouter = router({
  create: ceoProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks',
        tags,
        summary: 'Create a webhook; its signing secret is in this answer only',
        description:
          'Events of the listed types are POSTed to `url`, signed per the Standard Webhooks specification with `secret` (`whsec_…`): store it now, ' +
          'it is never shown again. At most 20 webhooks exist.',
      },
      rest: { status: 201, location: '/api/v1/webhooks/{id}' },
      errors: { 2000: DESTINATION, 4000: '20 webhooks exist already.' },
      limits: { op: 'webhooks.create' },
    })
    .input(CreateWebhookInput)
    .output(CreatedWebhookResponse)
    .mutation(({ ctx, input }) => webhooks.createWebhook({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, rulesOf(ctx.deps.config), input)),

  list: ceoProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks', tags, summary: 'List webhooks, newest first' },
      rest: { list: true },
    })
    .input(ListWebhooksInput)
    .output(WebhookPage)
    .query(({ ctx, input }) => webhooks.listWebhooks({ em: ctx.em, secret: ctx.deps.secret }, input)),

  get: ceoProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks/{webhook_id}', tags, summary: 'Get a webhook (never its secret)' },
      errors: { 3000: NO_WEBHOOK },
    })
    .input(WebhookIdInput)
    .output(WebhookResponse)
    .query(({ ctx, input }) => webhooks.getWebhook({ em: ctx.em }, input.webhook_id)),

  update: ceoProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/webhooks/{webhook_id}',
        tags,
        summary: 'Change a webhook',
        description: '`enabled: true` turns a webhook on again and clears `disabled_reason` and its count of consecutive failed deliveries.',
      },
      errors: { 2000: DESTINATION, 3000: NO_WEBHOOK },
      limits: { op: 'webhooks.update' },
    })
    .input(UpdateWebhookInput)
    .output(WebhookResponse)
    .mutation(({ ctx, input }) => webhooks.updateWebhook({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, rulesOf(ctx.deps.config), input)),

  delete: ceoProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/webhooks/{webhook_id}', tags, summary: 'Delete a webhook; its pending deliveries are dropped' },
      rest: { status: 204 },
      errors: { 3000: NO_WEBHOOK },
      limits: { op: 'webhooks.delete' },
    })
    .input(WebhookIdInput)
    .output(NoContent)
    .mutation(({ ctx, input }) => noContent(webhooks.deleteWebhook({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, input.webhook_id))),

  rotateSecret: ceoProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/{webhook_id}/rotate-secret',
        tags,
        summary: "Replace a webhook's signing secret; the new one is in this answer only",
        description: 'The old secret stops signing at once: every attempt from now on is signed with the new one.',
      },
      errors: { 3000: NO_WEBHOOK },
      limits: { op: 'webhooks.rotate_secret' },
    })
    .input(WebhookIdInput)
    .output(WebhookSecretResponse)
    .mutation(({ ctx, input }) => webhooks.rotateSecret({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, input.webhook_id)),

  test: ceoProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/{webhook_id}/test',
        tags,
        summary: 'Send a test event to a webhook',
        description:
          'Queues a delivery of `{id, type: "webhook.test", channel: "webhooks", occurred_at, actor, data: {webhook_id}}` (an id of its own); ' +
          'it is listed and retried like any other delivery.',
      },
      rest: { status: 202 },
      errors: { 3000: NO_WEBHOOK },
      limits: { op: 'webhooks.test' },
    })
    .input(WebhookIdInput)
    .output(DeliveryAccepted)
    .mutation(({ ctx, input }) => webhooks.testWebhook({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor, jobs: ctx.deps.jobs }, input.webhook_id)),

  deliveries: ceoProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks/{webhook_id}/deliveries', tags, summary: "A webhook's deliveries, newest first (kept 30 days)" },
      rest: { list: true },
      errors: { 3000: NO_WEBHOOK },
    })
    .input(ListDeliveriesInput)
    .output(DeliveryPage)
    .query(({ ctx, input }) => webhooks.listDeliveries({ em: ctx.em, secret: ctx.deps.secret }, input)),

  redeliver: ceoProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver',
        tags,
        summary: 'Attempt a delivery once more, now',
        description: 'The same delivery (same `webhook-id`, same body) is queued for one more attempt, whatever its status; its `attempts` keep counting.',
      },
      rest: { status: 202 },
      errors: { 3000: 'No webhook has this id, or it has no delivery with this id.' },
      limits: { op: 'webhooks.redeliver' },
    })
    .input(RedeliverInput)
    .output(DeliveryAccepted)
    .mutation(({ ctx, input }) => webhooks.redeliver({ em: ctx.em, clock: ctx.deps.clock, jobs: ctx.deps.jobs }, input)),
});
