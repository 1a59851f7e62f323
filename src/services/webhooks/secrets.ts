// Webhook signing secrets: the Standard Webhooks format, `whsec_` + base64 of 32 random bytes.
import { randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '../../contracts/webhooks.ts';

export const WEBHOOK_SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(WEBHOOK_SECRET_BYTES).toString('base64');
}
