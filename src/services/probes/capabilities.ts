// The capability report: one boolean per optional subsystem, computed from what this deployment wires.
import type { DashboardAssets } from '../../dashboard/assets.ts';
import type { LiveEvents } from '../../events/runtime.ts';
import type { RequestLimiter } from '../../limits/limiter.ts';
import type { CapabilitiesResponse } from '../../contracts/probes.ts';

export function capabilities({
  limiter,
  dashboard,
  events,
  metricsEnabled,
}: {
  limiter: RequestLimiter | null;
  dashboard: DashboardAssets | null;
  events: LiveEvents;
  metricsEnabled: boolean;
}): CapabilitiesResponse {
  return {
    // The WebSocket of live events is registered (the events plugin says so when it is).
    events: events.websocketServed,
    refresh_tokens: true,
    // What was wired, not what was asked for: the limiter is null when RATE_LIMITS_ENABLED=false.
    shared_rate_limits: limiter?.storeKind === 'postgres',
    // GET /metrics is registered exactly when METRICS_ENABLED (src/app.ts).
    metrics: metricsEnabled,
    docs: true,
    // Served only when enabled and built (see createService).
    dashboard: dashboard !== null,
    // Keys are part of authentication itself, which every deployment serves.
    api_keys: true,
    // Every change records its entry and GET /audit is always served (CONTRACT §4.13).
    audit: true,
    // Two-factor authentication is part of signing in, which every deployment serves (CONTRACT §3.6).
    mfa: true,
    // Deliveries run on the job queue every instance starts (CONTRACT §4.12).
    webhooks: true,
  };
}
