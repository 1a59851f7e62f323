// Webhook management (CONTRACT §4.12): create (the secret shown once), list, read, change, delete, rotate the secret, test, deliveries, redeliver.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Actor } from '../../contracts/actor.ts';
import type { Clock } from '../../contracts/clock.ts';
import { DEFAULT_PAGE_SIZE, type Pagination } from '../../contracts/pagination.ts';
import {
  MAX_WEBHOOKS,
  WebhookTestEvent,
  type CreatedWebhookResponse,
  type CreateWebhookInput,
  type DeliveryAccepted,
  type DeliveryResponse,
  type ListDeliveriesInput,
  type ListWebhooksInput,
  type RedeliverInput,
  type UpdateWebhookInput,
  type WebhookResponse,
  type WebhookSecretResponse,
} from '../../contracts/webhooks.ts';
import { ApiError } from '../../errors.ts';
import { recordEvent } from '../../events/record.ts';
import { publishEvents } from '../../events/store.ts';
import type { JobSender } from '../../jobs/jobType.ts';
import { decodeCursor, toPage } from '../pagination.ts';
import { assertDestinationAllowed, type Resolver } from './destination.ts';
import { queueAttempt } from './queueing.ts';
import { newWebhookSecret } from './secrets.ts';
import * as store from './store.ts';

export const WEBHOOKS_LIST = 'webhooks';
export const DELIVERIES_LIST = 'webhook_deliveries';

/** Whether URLs may point at private networks (WEBHOOK_ALLOW_PRIVATE), and how their names are resolved. */
export type DestinationRules = { allowPrivate: boolean; resolve?: Resolver };

type Env = { em: EntityManager; clock: Clock; actor: Actor };

const UUID = z.uuid();
const isUuid = (value: string) => UUID.safeParse(value).success;

/** The one mapping from a stored webhook to the wire, in the schema's key order. */
export function toWebhookResponse(webhook: store.StoredWebhook): WebhookResponse {
  return {
    id: webhook.id,
    url: webhook.url,
    event_types: webhook.eventTypes,
    description: webhook.description,
    enabled: webhook.enabled,
    disabled_reason: webhook.disabledReason,
    created_at: webhook.createdAt.toISOString(),
    updated_at: webhook.updatedAt.toISOString(),
    created_by: webhook.createdBy,
  };
}

function toDeliveryResponse(delivery: store.ListedDelivery): DeliveryResponse {
  return {
    id: delivery.id,
    webhook_id: delivery.webhookId,
    // Set once published (within a second of the commit); the list publishes first when one is not (below).
    event_id: delivery.eventId ?? String(delivery.publishedEventId ?? ''),
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    last_attempt_at: delivery.lastAttemptAt?.toISOString() ?? null,
    next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
    response_status: delivery.responseStatus,
    error: delivery.error,
    created_at: delivery.createdAt.toISOString(),
    succeeded_at: delivery.succeededAt?.toISOString() ?? null,
  };
}

/** What the audit log keeps of a webhook: never its secret. */
function auditDataOf(webhook: store.StoredWebhook) {
  return { url: webhook.url, event_types: webhook.eventTypes, description: webhook.description, enabled: webhook.enabled };
}

const target = (id: string) => ({ type: 'webhook', id });

/** A webhook by id; anything else (unknown, not a uuid) is 404/3000. */
async function existingWebhook(em: EntityManager, id: string, opts: { forUpdate?: boolean } = {}): Promise<store.StoredWebhook> {
  const webhook = isUuid(id) ? await store.findWebhook(em, id, opts) : undefined;
  if (!webhook) throw ApiError.notFound('webhook not found');
  return webhook;
}

/**
 * Creates a webhook (at most 20 exist, counted under a lock so concurrent creates cannot pass it together).
 * The destination is checked before anything is written; the secret is in this answer only.
 */
export async function createWebhook({ em, clock, actor }: Env, rules: DestinationRules, input: CreateWebhookInput): Promise<CreatedWebhookResponse> {
  await assertDestinationAllowed(input.url, rules);
  return em.transactional(async (tx) => {
    await store.lockWebhookCreation(tx);
    if ((await store.countWebhooks(tx)) >= MAX_WEBHOOKS) throw ApiError.conflict(`at most ${MAX_WEBHOOKS} webhooks; delete one first`);
    const now = clock.now();
    const webhook: store.StoredWebhook = {
      id: randomUUID(),
      url: input.url,
      eventTypes: input.event_types,
      description: input.description ?? null,
      enabled: input.enabled ?? true,
      disabledReason: null,
      consecutiveFailures: 0,
      secret: newWebhookSecret(),
      createdAt: now,
      updatedAt: now,
      createdBy: actor.username,
    };
    await store.insertWebhook(tx, webhook);
    await recordEvent(tx, { type: 'webhook.created', actor: actor.username, at: now, target: target(webhook.id), data: auditDataOf(webhook) });
    return { ...toWebhookResponse(webhook), secret: webhook.secret };
  });
}

const Position = z.tuple([z.iso.datetime({ precision: 3 }), z.uuid()]);

function positionOf(secret: Buffer, list: string, cursor: string | null | undefined): { createdAt: Date; id: string } | null {
  if (!cursor) return null;
  const position = Position.safeParse(decodeCursor(secret, list, cursor));
  if (!position.success) throw ApiError.badRequest('query.cursor: invalid or expired cursor');
  return { createdAt: new Date(position.data[0]), id: position.data[1] };
}

export async function listWebhooks({ em, secret }: { em: EntityManager; secret: Buffer }, input: ListWebhooksInput): Promise<{ items: WebhookResponse[]; pagination: Pagination }> {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const rows = await store.webhookPage(em, { after: positionOf(secret, WEBHOOKS_LIST, input.cursor), fetch: limit + 1 });
  return toPage(rows, { limit, secret, list: WEBHOOKS_LIST, positionOf: (w) => [w.createdAt.toISOString(), w.id], toItem: toWebhookResponse });
}

export async function getWebhook({ em }: { em: EntityManager }, webhookId: string): Promise<WebhookResponse> {
  return toWebhookResponse(await existingWebhook(em, webhookId));
}

/**
 * Changes what is given. Turning a webhook on clears why it was off and its run of failures; turning it off
 * by hand leaves no reason. A new URL is checked like a created one.
 */
export async function updateWebhook({ em, clock, actor }: Env, rules: DestinationRules, input: UpdateWebhookInput): Promise<WebhookResponse> {
  if (input.url !== undefined) await assertDestinationAllowed(input.url, rules);
  return em.transactional(async (tx) => {
    const current = await existingWebhook(tx, input.webhook_id, { forUpdate: true });
    const now = clock.now();
    const patch: Parameters<typeof store.updateWebhook>[2] = { updatedAt: now };
    if (input.url !== undefined) patch.url = input.url;
    if (input.event_types !== undefined) patch.eventTypes = input.event_types;
    if (input.description !== undefined) patch.description = input.description;
    if (input.enabled === true) Object.assign(patch, { enabled: true, disabledReason: null, consecutiveFailures: 0 });
    if (input.enabled === false) Object.assign(patch, { enabled: false, disabledReason: current.enabled ? null : current.disabledReason });
    const updated = await store.updateWebhook(tx, current.id, patch);
    if (!updated) throw ApiError.notFound('webhook not found');
    await recordEvent(tx, { type: 'webhook.updated', actor: actor.username, at: now, target: target(updated.id), data: auditDataOf(updated) });
    return toWebhookResponse(updated);
  });
}

/** Deletes the webhook and its deliveries (those still pending are dropped: their queued jobs find nothing). */
export async function deleteWebhook({ em, clock, actor }: Env, webhookId: string): Promise<void> {
  await em.transactional(async (tx) => {
    const existing = await existingWebhook(tx, webhookId, { forUpdate: true });
    await store.deleteWebhook(tx, existing.id);
    await recordEvent(tx, { type: 'webhook.deleted', actor: actor.username, at: clock.now(), target: target(existing.id), data: { url: existing.url } });
  });
}

/** A new secret, in this answer only; every attempt from now on signs with it (attempts read it when they start). */
export async function rotateSecret({ em, clock, actor }: Env, webhookId: string): Promise<WebhookSecretResponse> {
  return em.transactional(async (tx) => {
    const existing = await existingWebhook(tx, webhookId, { forUpdate: true });
    const now = clock.now();
    const secret = newWebhookSecret();
    await store.updateWebhook(tx, existing.id, { secret, updatedAt: now });
    await recordEvent(tx, { type: 'webhook.secret_rotated', actor: actor.username, at: now, target: target(existing.id), data: { url: existing.url } });
    return { secret };
  });
}

/**
 * Queues a test delivery: the event `webhook.test` with an id of its own, its body fixed at once. Listed
 * and counted like any other delivery.
 */
export async function testWebhook({ em, clock, actor, jobs }: Env & { jobs: JobSender }, webhookId: string): Promise<DeliveryAccepted> {
  return em.transactional(async (tx) => {
    const webhook = await existingWebhook(tx, webhookId);
    const now = clock.now();
    const event = WebhookTestEvent.parse({
      id: randomUUID(),
      type: 'webhook.test',
      channel: 'webhooks',
      occurred_at: now.toISOString(),
      actor: actor.username,
      data: { webhook_id: webhook.id },
    });
    const delivery = {
      id: randomUUID(),
      webhookId: webhook.id,
      eventRowId: null,
      eventId: event.id,
      eventType: event.type,
      body: JSON.stringify(event),
      status: 'pending' as const,
      attempts: 0,
      lastAttemptAt: null,
      nextAttemptAt: now,
      responseStatus: null,
      error: null,
      createdAt: now,
      succeededAt: null,
      attemptJobId: null,
    };
    await store.insertDeliveries(tx, [delivery]);
    await queueAttempt(jobs, tx, delivery);
    return { delivery_id: delivery.id };
  });
}

/** A webhook's deliveries, newest first, optionally of one status. */
export async function listDeliveries(
  { em, secret }: { em: EntityManager; secret: Buffer },
  input: ListDeliveriesInput,
): Promise<{ items: DeliveryResponse[]; pagination: Pagination }> {
  const webhook = await existingWebhook(em, input.webhook_id);
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const query = { webhookId: webhook.id, status: input.status ?? null, after: positionOf(secret, DELIVERIES_LIST, input.cursor), fetch: limit + 1 };
  let rows = await store.deliveryPage(em, query);
  // An event committed a moment ago may not be published yet; publishing now gives it the id the page shows.
  if (rows.some((d) => d.eventId === null && d.publishedEventId === null)) {
    await publishEvents(em.fork(), 1000);
    rows = await store.deliveryPage(em, query);
  }
  return toPage(rows, { limit, secret, list: DELIVERIES_LIST, positionOf: (d) => [d.createdAt.toISOString(), d.id], toItem: toDeliveryResponse });
}

/**
 * Queues one more attempt of the delivery now, whatever its status: same id, same body; its attempts keep
 * counting. A delivery that had ended gets that one attempt; one still retrying goes on with its schedule.
 */
export async function redeliver({ em, clock, jobs }: { em: EntityManager; clock: Clock; jobs: JobSender }, input: RedeliverInput): Promise<DeliveryAccepted> {
  return em.transactional(async (tx) => {
    const webhook = await existingWebhook(tx, input.webhook_id);
    const delivery = isUuid(input.delivery_id) ? await store.findDelivery(tx, webhook.id, input.delivery_id) : undefined;
    if (!delivery) throw ApiError.notFound('delivery not found');
    await store.markDue(tx, delivery.id, clock.now());
    await queueAttempt(jobs, tx, delivery);
    return { delivery_id: delivery.id };
  });
}
