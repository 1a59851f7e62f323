// Webhooks as the page shows them (CONTRACT §4.12): the event types a webhook may subscribe to, grouped by channel,
// and what a delivery's state means.
import type { WebhookEventType } from '../../../src/contracts/webhooks.ts';

type Choice = { channel: string; text: string };

/**
 * The types on offer. The API's type still names the private `sessions` channel (its list is filtered at run
 * time), which the API refuses for webhooks, so it is left out here.
 */
export type OfferedEventType = Exclude<WebhookEventType, 'session.revoked' | 'sessions.*'>;

/**
 * Every type a webhook may subscribe to, with its channel and a few words. Typed by the API's own
 * `WebhookEventType`, so the compiler refuses one missing here or one the API does not have (the list itself
 * lives in a zod module, which the first page must not load).
 */
export const EVENT_CHOICES: Record<OfferedEventType, Choice> = {
  'approvals.*': { channel: 'approvals', text: 'Every approval event' },
  'approval.created': { channel: 'approvals', text: 'A request was made' },
  'approval.approved': { channel: 'approvals', text: 'A request was approved' },
  'approval.rejected': { channel: 'approvals', text: 'A request was rejected' },
  'approval.expired': { channel: 'approvals', text: 'A request expired undecided' },
  'reviews.*': { channel: 'reviews', text: 'Every review event' },
  'review.stage_decided': { channel: 'reviews', text: "A task's review stage was decided" },
  'users.*': { channel: 'users', text: 'Every user event' },
  'user.created': { channel: 'users', text: 'A user was added' },
  'user.updated': { channel: 'users', text: "A user's role or org roles changed" },
  'user.deleted': { channel: 'users', text: 'A user was deleted' },
  'setup.*': { channel: 'setup', text: 'Every setup event' },
  'setup.company_created': { channel: 'setup', text: 'The company was created' },
  'setup.agent_created': { channel: 'setup', text: 'An agent was added' },
  'setup.agent_updated': { channel: 'setup', text: 'An agent was changed' },
  'setup.locales_updated': { channel: 'setup', text: 'The name locales changed' },
  'setup.completed': { channel: 'setup', text: 'Setup was completed' },
};

const isEventType = (value: string): value is OfferedEventType => Object.hasOwn(EVENT_CHOICES, value);

export const EVENT_TYPE_CHOICES: readonly OfferedEventType[] = Object.keys(EVENT_CHOICES).filter(isEventType);

/** The checkboxes in groups: each channel with its `<channel>.*` first. */
export function eventGroups(): Array<{ channel: string; types: OfferedEventType[] }> {
  const groups: Array<{ channel: string; types: OfferedEventType[] }> = [];
  for (const type of EVENT_TYPE_CHOICES) {
    const { channel } = EVENT_CHOICES[type];
    const group = groups.find((g) => g.channel === channel);
    if (group) group.types.push(type);
    else groups.push({ channel, types: [type] });
  }
  return groups;
}

/** Ticking `type` on or off, in the order of the choices (so equal selections are equal lists). */
export function toggled(selected: readonly OfferedEventType[], type: OfferedEventType, on: boolean): OfferedEventType[] {
  return EVENT_TYPE_CHOICES.filter((t) => (t === type ? on : selected.includes(t)));
}

/** A type covered by its channel's `.*` already ticked. */
export function coveredByChannel(selected: readonly OfferedEventType[], type: OfferedEventType): boolean {
  return !type.endsWith('.*') && selected.some((t) => t === `${EVENT_CHOICES[type].channel}.*`);
}
