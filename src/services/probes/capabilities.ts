// The capability report: one boolean per optional subsystem, computed from what this deployment wires.
import type { Deps } from '../../context/deps.ts';

export function capabilities(deps: Deps) {
  return {
    // The WebSocket of live events is registered (the events plugin says so when it is).
    events: deps.events.websocketServed,
    refresh_tokens: true,
    // What was wired, not what was asked for: the limiter is null when RATE_LIMITS_ENABLED=false.
    shared_rate_limits: deps.limiter?.storeKind === 'postgres',
    metrics: false,
    docs: true,
  };
}
