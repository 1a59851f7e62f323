// probes.{healthz, readyz, capabilities}
import { authedProcedure, router, unlimitedProcedure } from '../../trpc.ts';
import * as probes from '../../services/probes/probes.ts';
import { capabilities } from '../../services/probes/capabilities.ts';
import { CapabilitiesResponse, LivenessStatus, ReadinessStatus } from './schemas.ts';

export const probesRouter = router({
  healthz: unlimitedProcedure
    .meta({ openapi: { method: 'GET', path: '/healthz', tags: ['probes'], protect: false, summary: 'Liveness probe', errorResponses: [500] } })
    .output(LivenessStatus)
    .query(({ ctx }) => probes.liveness({ startedAt: ctx.deps.startedAt })),

  readyz: unlimitedProcedure
    .meta({ openapi: { method: 'GET', path: '/readyz', tags: ['probes'], protect: false, summary: 'Readiness probe (database round-trip)', errorResponses: [500, 503] } })
    .output(ReadinessStatus)
    .query(({ ctx }) => probes.readiness({ orm: ctx.deps.orm, logger: ctx.deps.logger, startedAt: ctx.deps.startedAt })),

  capabilities: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/capabilities', tags: ['probes'], summary: 'Optional subsystems wired in this deployment', errorResponses: [401, 429, 500, 503] } })
    .output(CapabilitiesResponse)
    .query(({ ctx }) =>
      capabilities({ limiter: ctx.deps.limiter, dashboard: ctx.deps.dashboard, events: ctx.deps.events, metricsEnabled: ctx.deps.config.metricsEnabled }),
    ),
});
