// Schemas of the probe endpoints.
import { z } from 'zod';

const version = z.string().describe("The service's version (the OpenAPI document's info.version).");
const uptimeSeconds = z.number().nonnegative().describe('Seconds since the service started.');

export const LivenessStatus = z
  .object({ status: z.literal('ok'), version, uptime_seconds: uptimeSeconds })
  .meta({ id: 'LivenessStatus' });
export type LivenessStatus = z.infer<typeof LivenessStatus>;

export const ReadinessStatus = z
  .object({ status: z.literal('ok'), version, persistence: z.literal(true), uptime_seconds: uptimeSeconds })
  .meta({ id: 'ReadinessStatus' });
export type ReadinessStatus = z.infer<typeof ReadinessStatus>;

export const CapabilitiesResponse = z
  .object({
    events: z.boolean().describe('The WebSocket event stream is served.'),
    refresh_tokens: z.boolean().describe('Refresh-token rotation is on.'),
    shared_rate_limits: z.boolean().describe('Rate limits are shared by every instance (PostgreSQL store).'),
    metrics: z.boolean().describe('A Prometheus /metrics endpoint is served.'),
    docs: z.boolean().describe('The reference UI at /docs is served.'),
    dashboard: z.boolean().describe('The web dashboard is served at /.'),
    api_keys: z.boolean().describe('Service accounts and API keys (`Authorization: Bearer aok_…`) are served.'),
    audit: z.boolean().describe('The audit log (GET /audit, GET /audit/export) is served.'),
    mfa: z.boolean().describe('Two-factor authentication (TOTP and recovery codes, `/auth/mfa`) is served.'),
    webhooks: z.boolean().describe('Outbound webhooks (`/webhooks`): events POSTed to the organization\'s other systems, signed per Standard Webhooks.'),
  })
  .meta({ id: 'CapabilitiesResponse' });
export type CapabilitiesResponse = z.infer<typeof CapabilitiesResponse>;
