// The capability report: one boolean per optional subsystem, computed from what this deployment wires.
import type { DashboardAssets } from '../../dashboard/assets.ts';
import type { RequestLimiter } from '../../limits/limiter.ts';
import type { CapabilitiesResponse } from '../../routers/probes/schemas.ts';

export function capabilities({ limiter, dashboard }: { limiter: RequestLimiter | null; dashboard: DashboardAssets | null }): CapabilitiesResponse {
  return {
    events: false,
    refresh_tokens: true,
    // What was wired, not what was asked for: the limiter is null when RATE_LIMITS_ENABLED=false.
    shared_rate_limits: limiter?.storeKind === 'postgres',
    metrics: false,
    docs: true,
    // Served only when enabled and built (see createService).
    dashboard: dashboard !== null,
  };
}
