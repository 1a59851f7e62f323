// The capability report: one boolean per optional subsystem, computed from what this deployment wires.
import type { RequestLimiter } from '../../limits/limiter.ts';
import type { CapabilitiesResponse } from '../../routers/probes/schemas.ts';

export function capabilities({ limiter, metricsEnabled }: { limiter: RequestLimiter | null; metricsEnabled: boolean }): CapabilitiesResponse {
  return {
    events: false,
    refresh_tokens: true,
    // What was wired, not what was asked for: the limiter is null when RATE_LIMITS_ENABLED=false.
    shared_rate_limits: limiter?.storeKind === 'postgres',
    // GET /metrics is registered exactly when METRICS_ENABLED (src/app.ts).
    metrics: metricsEnabled,
    docs: true,
  };
}
