// The webhook delivery job (CONTRACT §4.12): one attempt per job — fix the body, sign, POST, then settle, retry later or give up.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Webhook } from 'standardwebhooks';
import type { DeliveryError, DisabledReason } from '../../contracts/webhooks.ts';
import { LiveEvent } from '../../contracts/events.ts';
import { recordEvent } from '../../events/record.ts';
import { findEventByRowId, publishEvents } from '../../events/store.ts';
import { defineJob, type JobEnv, type RunningJob } from '../../jobs/jobType.ts';
import { SERVICE_VERSION } from '../../version.ts';
import { SYSTEM_ORIGIN } from '../audit/origin.ts';
import { DeliveryJobPayload, queueAttempt, WEBHOOK_DELIVERY_QUEUE } from './queueing.ts';
import { retryDelayS } from './schedule.ts';
import * as store from './store.ts';
import { attemptDelivery, type AttemptResult } from './transport.ts';
import type { Resolver } from './destination.ts';

export const USER_AGENT = `agent-org-webhooks/${SERVICE_VERSION}`;

/** Events published per call when a delivery finds its event still without an id. */
const PUBLISH_BATCH = 1000;

/**
 * The bytes every attempt of a delivery sends: the event of CONTRACT §4.8 exactly as the live streams send it
 * (same keys in the same order), with its public id. A delivery queued with its event runs after the commit,
 * possibly before this instance has published the event: then it publishes (what the publisher would do a
 * moment later). Written once; an attempt that raced another reads the body that won.
 */
async function bodyOf(em: EntityManager, delivery: store.StoredDelivery): Promise<string | null> {
  if (delivery.body !== null) return delivery.body;
  if (delivery.eventRowId === null) return null;
  let row = await findEventByRowId(em, delivery.eventRowId);
  if (row && row.id === null) {
    await publishEvents(em.fork(), PUBLISH_BATCH);
    row = await findEventByRowId(em, delivery.eventRowId);
  }
  if (!row || row.id === null) return null;
  const event = LiveEvent.parse({
    id: String(row.id),
    type: row.type,
    channel: row.channel,
    occurred_at: row.occurredAt.toISOString(),
    actor: row.actor,
    data: row.data,
  });
  return store.fixBody(em, delivery.id, JSON.stringify(event), event.id);
}

/** The Standard Webhooks headers of one attempt, signed with the webhook's current secret. */
export function signedHeaders(delivery: { id: string; secret: string }, body: string, at: Date): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': delivery.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(delivery.secret).sign(delivery.id, at, body),
  };
}

/** What the attempts metric calls an attempt's result: `success`, or the kind of failure (no status codes: a bounded set). */
function resultLabel(result: AttemptResult): string {
  if (result.ok) return 'success';
  return result.error.startsWith('HTTP ') ? 'http_error' : result.error.replaceAll(' ', '_');
}

type Settings = { resolve?: Resolver };

/**
 * Makes one attempt of the delivery, if it is still this job's to make (see store.claimAttempt), and writes its
 * outcome. Throws only when the database fails; the queue then runs the job again.
 */
export async function runAttempt(payload: DeliveryJobPayload, env: JobEnv, job: Pick<RunningJob, 'id'>, settings: Settings = {}): Promise<void> {
  const { orm, clock, config, metrics } = env;
  const em = orm.em.fork();
  const startedAt = clock.now();
  const claimed = await store.claimAttempt(em, { id: payload.delivery_id, expectedAttempts: payload.attempts, jobId: job.id, now: startedAt });
  // Its webhook was deleted (the delivery with it), or another job made this attempt: nothing to do.
  if (!claimed) return;
  const body = await bodyOf(em, claimed);
  if (body === null) {
    // Only when the event was purged before the delivery first went out, which the events' purge prevents.
    env.logger.error({ delivery_id: claimed.id }, 'webhook delivery has no event to send; dropped');
    return;
  }
  const result = await attemptDelivery(claimed.url, body, signedHeaders(claimed, body, startedAt), {
    timeoutMs: config.webhookTimeoutS * 1000,
    allowPrivate: config.webhookAllowPrivate,
    ...(settings.resolve ? { resolve: settings.resolve } : {}),
  });
  metrics.webhookAttempts.inc({ result: resultLabel(result) });
  const ended = await settleRetrying(env, claimed, result);
  if (ended) metrics.webhookDeliveries.inc({ outcome: ended });
}

/** Pauses before writing an attempt's outcome again, after each failed write. */
const SETTLE_RETRY_DELAYS_MS = [250, 1000, 3000];

/**
 * The attempt has been made: its outcome is written, retried here on a brief database failure (a pool
 * exhausted for a moment, a connection reset). Throwing instead would have the queue run the job again, and
 * that run would POST the delivery a second time. Retrying is safe: a failed settling transaction wrote
 * nothing, and the success path's statements set the same values again. Only a longer outage throws.
 */
async function settleRetrying(env: JobEnv, delivery: store.StoredDelivery, result: AttemptResult): Promise<'succeeded' | 'failed' | null> {
  for (const delayMs of SETTLE_RETRY_DELAYS_MS) {
    try {
      return await settle(env.orm.em.fork(), env, delivery, result);
    } catch (error) {
      env.logger.warn({ err: error, delivery_id: delivery.id }, 'writing a webhook attempt\'s outcome failed; trying again');
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
  return settle(env.orm.em.fork(), env, delivery, result);
}

/**
 * Writes an attempt's outcome: the delivery's state, the webhook's run of failures (and turning it off), and
 * the next attempt's job, each failure in one transaction (the next attempt is queued if and only if the
 * failure is written). A delivery that was still pending follows the retry schedule; one that had already
 * ended (a redelivery) gets this one attempt only. Returns how the delivery ended, if it did.
 */
async function settle(em: EntityManager, env: JobEnv, delivery: store.StoredDelivery, result: AttemptResult): Promise<'succeeded' | 'failed' | null> {
  const { clock, config } = env;
  const now = clock.now();
  const wasPending = delivery.status === 'pending';
  if (result.ok) {
    // Two single-row statements, no transaction: the run of failures is reset even if the first one was retried.
    await store.settleAttempt(em, delivery.id, { status: 'succeeded', responseStatus: result.status, error: null, nextAttemptAt: null, succeededAt: now });
    await store.resetFailures(em, delivery.webhookId);
    return delivery.status === 'succeeded' ? null : 'succeeded';
  }
  const failure: { responseStatus: number | null; error: DeliveryError } = { responseStatus: result.status, error: result.error };
  const gone = result.status === 410;
  return em.transactional(async (tx) => {
    if (wasPending && !gone && delivery.attempts < config.webhookMaxAttempts) {
      const delayS = retryDelayS(delivery.attempts, config.webhookRetryBaseS);
      await store.settleAttempt(tx, delivery.id, { status: 'pending', ...failure, nextAttemptAt: new Date(now.getTime() + delayS * 1000), succeededAt: null });
      await queueAttempt(env.jobs, tx, delivery, delayS);
      return null;
    }
    await store.settleAttempt(tx, delivery.id, { status: 'failed', ...failure, nextAttemptAt: null, succeededAt: null });
    if (gone) await disable(tx, delivery.webhookId, 'endpoint answered 410', now);
    if (wasPending) {
      const failures = await store.countFailure(tx, delivery.webhookId);
      if (failures !== undefined && failures >= config.webhookDisableAfter) await disable(tx, delivery.webhookId, 'too many failed deliveries', now);
    }
    return delivery.status === 'failed' ? null : 'failed';
  });
}

/** Turns the webhook off (if it was on) with its `webhook.disabled` audit entry, in the settling transaction. */
async function disable(tx: EntityManager, webhookId: string, reason: DisabledReason, now: Date): Promise<void> {
  const webhook = await store.disableWebhook(tx, webhookId, reason, now);
  if (!webhook) return;
  await recordEvent(tx, { type: 'webhook.disabled', actor: null, at: now, target: { type: 'webhook', id: webhookId }, data: { url: webhook.url, reason }, origin: SYSTEM_ORIGIN });
}

/**
 * The queue of attempts. pg-boss retries a job only when its run failed (the database was away) or its
 * worker died (after `expireInSeconds`, longer than any attempt may take); failed attempts are retried on the
 * contract's own schedule, by a new job sent with `startAfter`. Workers are woken the moment a delivery is
 * queued, and each fetches a batch whose attempts run together, so a slow receiver holds one slot, not the queue.
 */
export function webhookDeliveryJob(settings: Settings = {}) {
  return defineJob({
    ...WEBHOOK_DELIVERY_QUEUE,
    payload: DeliveryJobPayload,
    queue: {
      retryLimit: 5,
      retryDelayS: 5,
      retryBackoff: true,
      retryDelayMaxS: 300,
      // WEBHOOK_TIMEOUT_S is at most 60 s: a run still going after this has lost its worker.
      expireInSeconds: 180,
      // At most 20 attempts in flight per instance: each makes a few short statements on the ORM's pool
      // (DB_POOL_MAX, 20 by default), which requests share; more would starve them under a burst.
      concurrency: 2,
      batchSize: 10,
      pollIntervalS: 0.5,
      wakeOnSend: true,
    },
    run: (payload, env, job) => runAttempt(payload, env, job, settings),
  });
}
