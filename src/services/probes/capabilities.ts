// The capability report: one boolean per optional subsystem, computed from what this deployment wires.
import type { Deps } from '../../context/deps.ts';

export function capabilities(deps: Deps) {
  return {
    events: false,
    refresh_tokens: true,
    shared_rate_limits: deps.config.rateLimitsEnabled && deps.config.rateLimitStore === 'postgres',
    metrics: false,
    docs: true,
  };
}
