// Schemas of the probe endpoints.
import { z } from 'zod';

export const LivenessStatus = z
  .object({ status: z.literal('ok'), uptime_seconds: z.number().nonnegative() })
  .meta({ id: 'LivenessStatus' });

export const ReadinessStatus = z
  .object({ status: z.literal('ok'), persistence: z.literal(true), uptime_seconds: z.number().nonnegative() })
  .meta({ id: 'ReadinessStatus' });

export const CapabilitiesResponse = z
  .object({
    events: z.boolean().describe('The WebSocket event stream is served.'),
    refresh_tokens: z.boolean().describe('Refresh-token rotation is on.'),
    shared_rate_limits: z.boolean().describe('Rate limits are shared by every instance (PostgreSQL store).'),
    metrics: z.boolean().describe('A Prometheus /metrics endpoint is served.'),
    docs: z.boolean().describe('The reference UI at /docs is served.'),
    dashboard: z.boolean().describe('The web dashboard is served at /.'),
  })
  .meta({ id: 'CapabilitiesResponse' });
