// Schemas of the API-key endpoints (CONTRACT §3.5): the scopes, ApiKeyResponse and the strict inputs of apiKeys.*.
import { z } from 'zod';
import { page, pageQueryShape } from './pagination.ts';

/** What a key may do, one scope per group of operations (CONTRACT §3.5's table). */
export const SCOPES = [
  'approvals:read',
  'approvals:write',
  'approvals:decide',
  'reviews:read',
  'reviews:write',
  'users:read',
  'setup:read',
  'events:read',
  'audit:read',
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** How the secret starts, so that secret scanners recognise a leaked key. */
export const API_KEY_PREFIX = 'aok_';
/** Characters of the key shown in lists (`aok_` and the first 8 of the random part). */
export const API_KEY_PREFIX_LENGTH = 12;
export const MAX_API_KEY_NAME_LENGTH = 100;
/** The furthest `expires_at` may lie ahead. */
export const MAX_API_KEY_LIFETIME_DAYS = 365;
/** Active (not revoked, not expired) keys one user may hold. */
export const MAX_ACTIVE_API_KEYS_PER_USER = 20;

export const ScopeSchema = z.enum(SCOPES).describe('What the key may do; see the scope table in the API description.');

const Timestamp = z.iso.datetime({ precision: 3 });
const KeyIdParam = z.string().min(1).max(128).describe('Id of the API key.');
const UserIdParam = z.string().min(1).max(128);

export const ApiKeyResponse = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    name: z.string(),
    prefix: z.string().describe('The first 12 characters of the key (`aok_…`), to tell keys apart; never enough to use one.'),
    user_id: z.string().meta({ format: 'uuid' }).describe('The user the key acts as.'),
    username: z.string(),
    scopes: z.array(ScopeSchema),
    created_at: Timestamp,
    created_by: z.string().describe('Username of whoever issued the key.'),
    expires_at: Timestamp.nullable().describe('When the key stops working; null: never.'),
    last_used_at: Timestamp.nullable().describe('Last request made with the key, to the minute (written at most once a minute).'),
    revoked_at: Timestamp.nullable(),
  })
  .meta({ id: 'ApiKeyResponse' });
export type ApiKeyResponse = z.infer<typeof ApiKeyResponse>;

export const CreatedApiKeyResponse = ApiKeyResponse.extend({
  secret: z.string().describe('The key itself (`aok_` + base64url text of 256 random bits): shown in this response only, never again.'),
}).meta({ id: 'CreatedApiKeyResponse' });
export type CreatedApiKeyResponse = z.infer<typeof CreatedApiKeyResponse>;

export const CreateApiKeyInput = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(MAX_API_KEY_NAME_LENGTH)
      .refine((s) => s.trim().length > 0, { message: 'must not be blank' })
      .describe(`What the key is for (1..${MAX_API_KEY_NAME_LENGTH} characters).`),
    scopes: z
      .array(ScopeSchema)
      .min(1)
      .max(SCOPES.length)
      .refine((scopes) => new Set(scopes).size === scopes.length, { message: 'must not repeat a scope' })
      .describe(`1..${SCOPES.length} distinct scopes.`),
    expires_at: z.iso
      .datetime({ offset: true })
      .nullish()
      .describe(`When the key stops working: in the future, at most ${MAX_API_KEY_LIFETIME_DAYS} days ahead; absent or null: never.`),
    user_id: UserIdParam.optional().describe("The user the key acts as (the CEO may name anyone, e.g. a service account); absent: the caller."),
  })
  .meta({ id: 'CreateApiKeyRequest' });
export type CreateApiKeyInput = z.infer<typeof CreateApiKeyInput>;

export const ListApiKeysInput = z.strictObject({
  user_id: UserIdParam.nullish().describe("Only this user's keys (the CEO's filter; anyone else may name only themselves)."),
  ...pageQueryShape,
});
export type ListApiKeysInput = z.infer<typeof ListApiKeysInput>;
export const ApiKeyPage = page(ApiKeyResponse);

export const GetApiKeyInput = z.strictObject({ key_id: KeyIdParam });
export const RevokeApiKeyInput = z.strictObject({ key_id: KeyIdParam });

/** The key a request was made with, as `GET /auth/me` shows it. */
export const ApiKeyInfo = z
  .object({ id: z.string().meta({ format: 'uuid' }), name: z.string(), prefix: z.string(), scopes: z.array(ScopeSchema) })
  .describe('The API key the request was made with; absent for sessions.')
  .meta({ id: 'ApiKeyInfo' });
export type ApiKeyInfo = z.infer<typeof ApiKeyInfo>;
