// Schemas of the approval endpoints: the create/decide bodies, the list query and ApprovalResponse.
import { z } from 'zod';
import { APPROVAL_STATUSES, RISK_LEVELS } from './values.ts';
import { page, pageQueryShape } from './pagination.ts';

const MIN_TTL_SECONDS = 60;
const MAX_TTL_SECONDS = 604_800;
const MAX_METADATA_KEYS = 20;
const URGENCY_LEVELS = ['critical', 'high', 'normal', 'no_expiry'] as const;

const ApprovalId = z.string().min(1).max(128).describe('Id of the approval.');

// Exactly one colon with something other than whitespace on each side, e.g. `deploy:production`.
const ACTION_TYPE_PATTERN = /^[^:]*[^:\s][^:]*:[^:]*[^:\s][^:]*$/;

const ActionType = z
  .string()
  .max(128)
  .regex(ACTION_TYPE_PATTERN, { message: 'must be <category>:<action> with exactly one colon and text on both sides' })
  .describe('`category:action`, e.g. `deploy:production`.');

/** Free text that must say something: whitespace alone is as empty as nothing. */
const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => s.trim().length > 0, { message: 'must not be blank' });

const MetadataText = z.string().min(1).max(256);
const Metadata = z
  .record(MetadataText, MetadataText, {
    error: (issue) => (issue.code === 'invalid_key' ? 'keys must be 1 to 256 characters' : undefined),
  })
  .refine((m) => Object.keys(m).length <= MAX_METADATA_KEYS, { message: `must have at most ${MAX_METADATA_KEYS} keys` });

export const CreateApprovalInput = z
  .strictObject({
    action_type: ActionType,
    title: text(256),
    description: text(4096),
    risk_level: z.enum(RISK_LEVELS),
    ttl_seconds: z
      .int()
      .min(MIN_TTL_SECONDS)
      .max(MAX_TTL_SECONDS)
      .nullish()
      .describe(`Seconds until the approval expires (${MIN_TTL_SECONDS}..${MAX_TTL_SECONDS}); null or absent: it never expires.`),
    task_id: z.string().min(1).max(128).nullish().describe('The task this approval belongs to, if any.'),
    metadata: Metadata.optional().describe(`String pairs, at most ${MAX_METADATA_KEYS} keys; keys and values 1..256 characters.`),
  })
  .meta({ id: 'CreateApprovalRequest' });
export type CreateApprovalInput = z.infer<typeof CreateApprovalInput>;

export const ListApprovalsInput = z.strictObject({
  status: z.enum(APPROVAL_STATUSES).nullish().describe('Effective status; `expired` includes pending approvals whose time has passed.'),
  risk_level: z.enum(RISK_LEVELS).nullish(),
  action_type: z.string().max(128).nullish().describe('Exact action type.'),
  ...pageQueryShape,
});
export type ListApprovalsInput = z.infer<typeof ListApprovalsInput>;

/** Longest a `GET /approvals/{id}?wait_s=N` may hold its answer (CONTRACT §4.11). */
export const MAX_WAIT_SECONDS = 60;

export const GetApprovalInput = z.strictObject({
  approval_id: ApprovalId,
  wait_s: z
    .int()
    .min(1)
    .max(MAX_WAIT_SECONDS)
    .nullish()
    .describe(
      `Seconds (1..${MAX_WAIT_SECONDS}) to hold the answer while the approval is pending: it comes as soon as the approval is ` +
        'decided or expires, or when the time is up (then still `pending`). Absent or empty: answered at once.',
    ),
});

export const ApproveInput = z.strictObject({
  approval_id: ApprovalId,
  comment: z.string().max(4096).nullish().describe('Optional note kept as `decision_reason`.'),
}).meta({ id: 'ApproveRequest' });

export const RejectInput = z.strictObject({
  approval_id: ApprovalId,
  reason: text(4096).describe('Why the request is rejected; kept as `decision_reason`.'),
}).meta({ id: 'RejectRequest' });

const Timestamp = z.iso.datetime({ precision: 3 });

export const ApprovalResponse = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    action_type: z.string(),
    title: z.string(),
    description: z.string(),
    requested_by: z.string().describe('Username of the requester.'),
    risk_level: z.enum(RISK_LEVELS),
    status: z.enum(APPROVAL_STATUSES),
    created_at: Timestamp,
    expires_at: Timestamp.nullable(),
    decided_at: Timestamp.nullable().describe('When it was approved or rejected; null while pending and for expired approvals.'),
    decided_by: z.string().nullable().describe('Username of the decider.'),
    decision_reason: z.string().nullable().describe('The approver\'s comment or the rejection reason.'),
    task_id: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    seconds_remaining: z
      .int()
      .nonnegative()
      .nullable()
      .describe('Whole seconds until expiry (rounded up) while pending; 0 once no longer pending; null without an expiry.'),
    urgency_level: z.enum(URGENCY_LEVELS).describe('critical: <= 3600 s left, high: <= 14400 s, normal: more, no_expiry: no expires_at.'),
  })
  .meta({ id: 'ApprovalResponse' });
/** The wire shape of an approval; `toApprovalResponse` in the service is the one mapping to it. */
export type ApprovalResponse = z.infer<typeof ApprovalResponse>;

export const ApprovalPage = page(ApprovalResponse);
