// The capability report: one boolean per optional subsystem, computed from what this deployment wires.
import type { DashboardAssets } from '../../dashboard/assets.ts';
import type { EventsRuntime } from '../../events/runtime.ts';
import type { RequestLimiter } from '../../limits/limiter.ts';
import type { CapabilitiesResponse } from '../../routers/probes/schemas.ts';

export function capabilities({ limiter, dashboard, events }: { limiter: RequestLimiter | null; dashboard: DashboardAssets | null; events: EventsRuntime }): CapabilitiesResponse {
  return {
    // The WebSocket of live events is registered (the events plugin says so when it is).
    events: events.websocketServed,
    refresh_tokens: true,
    // What was wired, not what was asked for: the limiter is null when RATE_LIMITS_ENABLED=false.
    shared_rate_limits: limiter?.storeKind === 'postgres',
    metrics: false,
    docs: true,
    // Served only when enabled and built (see createService).
    dashboard: dashboard !== null,
  };
}
