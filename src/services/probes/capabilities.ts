// The capability report: one boolean per optional subsystem, computed from what this deployment wires.
import type { Deps } from '../../context/deps.ts';

export function capabilities(deps: Deps) {
  return {
    events: false,
    refresh_tokens: true,
    // What was wired, not what was asked for: the limiter is null when RATE_LIMITS_ENABLED=false.
    shared_rate_limits: deps.limiter?.storeKind === 'postgres',
    metrics: false,
    docs: true,
    // Served only when enabled and built (see createService).
    dashboard: deps.dashboard !== null,
  };
}
