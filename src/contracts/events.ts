// Every live event of CONTRACT §4.8, defined once in zod: its channel, who receives it and its payload schema.
import { z } from 'zod';
import { ApprovalResponse } from './approvals.ts';
import { StageDecisionResponse } from './reviews.ts';
import {
  SetupAgentResponse,
  SetupAgentSummary,
  SetupCompanyResponse,
  SetupCompleteResponse,
  SetupNameLocalesResponse,
} from './setup.ts';
import { UserResponse } from './users.ts';

export const CHANNELS = ['approvals', 'reviews', 'users', 'setup', 'sessions'] as const;
export const Channel = z.enum(CHANNELS).describe('A channel of live events.');
export type Channel = z.infer<typeof Channel>;

/** Why a session ended, as `session.revoked` says it: the sessions service stores the same names. */
export const SESSION_END_REASONS = ['logout', 'revoked', 'password_changed', 'evicted', 'refresh_replayed', 'user_deleted'] as const;
export type SessionEndReason = (typeof SESSION_END_REASONS)[number];

export const DeletedUserData = z.object({ id: z.string(), username: z.string() }).meta({ id: 'DeletedUser' });
export const SessionRevokedData = z
  .object({ session_id: z.string(), reason: z.enum(SESSION_END_REASONS) })
  .meta({ id: 'SessionRevoked' });

/** Decimal sequence number of an event; ids increase in commit order. 15 digits stay exact in a JS number. */
export const EventId = z
  .string()
  .regex(/^\d{1,15}$/, { message: 'must be an event id (decimal digits)' })
  .describe('Id of an event (a decimal sequence number, increasing in commit order).');

/** `user`: delivered only to the user the event names as its audience; `all`: to every authorized subscriber. */
type Audience = 'all' | 'user';

function eventType<const T extends string, const C extends Channel, S extends z.ZodType, const A extends Audience>(type: T, channel: C, data: S, audience: A, description: string) {
  const schema = z
    .object({
      id: EventId,
      type: z.literal(type),
      channel: z.literal(channel),
      occurred_at: z.iso.datetime({ precision: 3 }).describe('When the change was made.'),
      actor: z.string().nullable().describe('Username of whoever made the change; null for the system (e.g. expiry).'),
      data,
    })
    .describe(description);
  return { type, channel, data, audience, description, schema };
}

/** The catalogue: the table of CONTRACT §4.8, one entry per event type. */
export const EVENT_DEFINITIONS = [
  eventType('approval.created', 'approvals', ApprovalResponse, 'all', 'An approval was requested.'),
  eventType('approval.approved', 'approvals', ApprovalResponse, 'all', 'An approval was approved.'),
  eventType('approval.rejected', 'approvals', ApprovalResponse, 'all', 'An approval was rejected.'),
  eventType('approval.expired', 'approvals', ApprovalResponse, 'all', 'A pending approval reached its deadline.'),
  eventType('review.stage_decided', 'reviews', StageDecisionResponse, 'all', 'A review stage of a task was decided.'),
  eventType('user.created', 'users', UserResponse, 'all', 'A user was created.'),
  eventType('user.updated', 'users', UserResponse, 'all', "A user's role, organization roles, must_change_password or mfa_enabled changed."),
  eventType('user.deleted', 'users', DeletedUserData, 'all', 'A user was deleted.'),
  eventType('setup.company_created', 'setup', SetupCompanyResponse, 'all', 'The company was created (POST /setup/company).'),
  eventType('setup.agent_created', 'setup', SetupAgentResponse, 'all', 'An agent was added (POST /setup/agent).'),
  eventType('setup.agent_updated', 'setup', SetupAgentSummary, 'all', "An agent's name, model or personality changed."),
  eventType('setup.locales_updated', 'setup', SetupNameLocalesResponse, 'all', 'The name locales were chosen (PUT /setup/name-locales).'),
  eventType('setup.completed', 'setup', SetupCompleteResponse, 'all', 'First-run setup was completed.'),
  eventType('session.revoked', 'sessions', SessionRevokedData, 'user', "A session ended; delivered only to the session's own user."),
] as const;

type Definition = (typeof EVENT_DEFINITIONS)[number];
export type EventType = Definition['type'];
export type EventDefinition<T extends EventType = EventType> = Extract<Definition, { type: T }>;
/** The payload a recorder passes for an event type (before parsing). */
export type EventDataInput<T extends EventType> = z.input<EventDefinition<T>['data']>;
/** Types whose events reach one user only; recording them needs an audience. */
export type PrivateEventType = Extract<Definition, { audience: 'user' }>['type'];

export const EVENT_TYPES = EVENT_DEFINITIONS.map((d) => d.type);

export function definitionOf<T extends EventType>(type: T): EventDefinition<T>;
export function definitionOf(type: EventType): Definition {
  const found = EVENT_DEFINITIONS.find((d) => d.type === type);
  if (!found) throw new Error(`unknown event type ${type}`);
  return found;
}

/** An event as clients receive it: `{id, type, channel, occurred_at, actor, data}`, discriminated by `type`. */
export const LiveEvent = z.discriminatedUnion(
  'type',
  [
    definitionOf('approval.created').schema,
    definitionOf('approval.approved').schema,
    definitionOf('approval.rejected').schema,
    definitionOf('approval.expired').schema,
    definitionOf('review.stage_decided').schema,
    definitionOf('user.created').schema,
    definitionOf('user.updated').schema,
    definitionOf('user.deleted').schema,
    definitionOf('setup.company_created').schema,
    definitionOf('setup.agent_created').schema,
    definitionOf('setup.agent_updated').schema,
    definitionOf('setup.locales_updated').schema,
    definitionOf('setup.completed').schema,
    definitionOf('session.revoked').schema,
  ],
);
export type LiveEvent = z.infer<typeof LiveEvent>;

/** Input of events.subscribe: the channels, and the id to resume after. */
export const SubscribeEventsInput = z.strictObject({
  channels: z.array(Channel).min(1).max(CHANNELS.length * 2),
  /** Set by httpSubscriptionLink on reconnect (the id of the last event received). */
  lastEventId: EventId.nullish(),
});
