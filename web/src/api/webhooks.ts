// The webhooks' reads (webhooks.list, webhooks.deliveries, CONTRACT §4.12). No event reports webhooks or
// deliveries, so their keys sit outside every channel: mutations refresh them, and an open deliveries list
// is read again every few seconds while one of its deliveries is still pending or was just redelivered.
import { queryOptions } from '@tanstack/preact-query';
import { queryClient } from './queryClient.ts';
import { trpc } from './trpc.ts';

/** At most 20 webhooks exist (CONTRACT §4.12): one page holds them all. */
const ALL_WEBHOOKS = 20;
/** The recent deliveries shown per webhook. */
const RECENT_DELIVERIES = 20;
const PENDING_POLL_MS = 2000;

export const webhookKeys = {
  all: ['webhooks'],
  list: ['webhooks', 'list'],
  deliveries: (webhookId: string) => ['webhooks', 'deliveries', webhookId] as const,
} as const;

export const webhooksQuery = () =>
  queryOptions({ queryKey: webhookKeys.list, queryFn: async () => (await trpc.webhooks.list.query({ limit: ALL_WEBHOOKS })).items });

export const deliveriesQuery = (webhookId: string) =>
  queryOptions({
    queryKey: webhookKeys.deliveries(webhookId),
    queryFn: async () => (await trpc.webhooks.deliveries.query({ webhook_id: webhookId, limit: RECENT_DELIVERIES })).items,
    // A delivery is made by the job queue after the request that queued it: follow it until it settles. A
    // redelivery keeps the delivery's status meanwhile, so it is followed for a while after it was asked.
    refetchInterval: (query) => (query.state.data?.some((d) => d.status === 'pending') || Date.now() < (followed.get(webhookId) ?? 0) ? PENDING_POLL_MS : false),
  });

/** How long a webhook's deliveries are read again after a redelivery was asked: its attempt is made by then. */
const FOLLOW_MS = 20_000;
const followed = new Map<string, number>();

/** A redelivery was queued: read the webhook's deliveries again now, and every few seconds for a while. */
export function followDeliveries(webhookId: string): Promise<void> {
  followed.set(webhookId, Date.now() + FOLLOW_MS);
  return queryClient.invalidateQueries({ queryKey: webhookKeys.deliveries(webhookId) });
}

export function refreshWebhooks(): Promise<void> {
  return queryClient.invalidateQueries({ queryKey: webhookKeys.all });
}
