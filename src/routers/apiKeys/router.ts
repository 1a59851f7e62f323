// apiKeys.{create, list, get, revoke}: a user's machine credentials (CONTRACT §3.5). Never open to keys themselves.
import { authedProcedure, router } from '../../trpc.ts';
import { NoContent, noContent } from '../noContent.ts';
import * as apiKeys from '../../services/apiKeys/apiKeys.ts';
import { ApiKeyPage, ApiKeyResponse, CreateApiKeyInput, CreatedApiKeyResponse, GetApiKeyInput, ListApiKeysInput, RevokeApiKeyInput } from '../../contracts/apiKeys.ts';

const tags = ['api-keys'];
const NO_KEY = 'No API key has this id, or it is another user\'s and the caller is not the CEO.';

export const apiKeysRouter = router({
  create: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api-keys',
        tags,
        summary: 'Issue an API key; its secret is in this answer only',
        description:
          'For the caller, or (the CEO) for any user named by `user_id`, in particular a service account. The answer carries `secret`, ' +
          'the key itself: store it now, it is never shown again (the service keeps only its SHA-256). Use it as `Authorization: Bearer <secret>`.',
      },
      rest: { status: 201, location: '/api/v1/api-keys/{id}' },
      errors: {
        1001: 'A `user_id` other than the caller\'s, from anyone but the CEO.',
        2000: '`expires_at` is not in the future, or more than 365 days ahead.',
        3000: 'No user has this `user_id`.',
        4000: 'The user already holds 20 active (not revoked, not expired) keys.',
      },
      limits: { op: 'api_keys.create' },
    })
    .input(CreateApiKeyInput)
    .output(CreatedApiKeyResponse)
    .mutation(({ ctx, input }) => apiKeys.createApiKey({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, input)),

  list: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api-keys', tags, summary: "List API keys, newest first: the caller's own, or every user's for the CEO" },
      rest: { list: true },
      errors: { 1001: 'A `user_id` other than the caller\'s, from anyone but the CEO.' },
    })
    .input(ListApiKeysInput)
    .output(ApiKeyPage)
    .query(({ ctx, input }) => apiKeys.listApiKeys({ em: ctx.em, secret: ctx.deps.secret, actor: ctx.actor }, input)),

  get: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api-keys/{key_id}', tags, summary: 'Get an API key (never its secret)' },
      errors: { 3000: NO_KEY },
    })
    .input(GetApiKeyInput)
    .output(ApiKeyResponse)
    .query(({ ctx, input }) => apiKeys.getApiKey({ em: ctx.em, actor: ctx.actor }, input.key_id)),

  revoke: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api-keys/{key_id}', tags, summary: 'Revoke an API key (idempotent)', description: 'Requests made with the key get 401/1002 from now on; its event streams close within 2 s.' },
      rest: { status: 204 },
      errors: { 3000: NO_KEY },
      limits: { op: 'api_keys.revoke' },
    })
    .input(RevokeApiKeyInput)
    .output(NoContent)
    .mutation(({ ctx, input }) => noContent(apiKeys.revokeApiKey({ em: ctx.em, clock: ctx.deps.clock, actor: ctx.actor }, input.key_id))),
});
