// probes.{healthz, readyz, capabilities}
import { authedProcedure, router, unlimitedProcedure } from '../../trpc.ts';
import * as probes from '../../services/probes/probes.ts';
import { capabilities } from '../../services/probes/capabilities.ts';
import { CapabilitiesResponse, LivenessStatus, ReadinessStatus } from '../../contracts/probes.ts';

export const probesRouter = router({
  healthz: unlimitedProcedure
    .meta({ openapi: { method: 'GET', path: '/healthz', tags: ['probes'], summary: 'Liveness probe' } })
    .output(LivenessStatus)
    .query(({ ctx }) => probes.liveness({ startedAt: ctx.deps.startedAt })),

  readyz: unlimitedProcedure
    .meta({
      openapi: { method: 'GET', path: '/readyz', tags: ['probes'], summary: 'Readiness probe (database round-trip)' },
      errors: { 8001: 'The database did not answer within 2 s; the detail names the failing dependency (`persistence unavailable`).' },
    })
    .output(ReadinessStatus)
    .query(({ ctx }) => probes.readiness({ orm: ctx.deps.orm, logger: ctx.deps.logger, startedAt: ctx.deps.startedAt })),

  capabilities: authedProcedure
    .meta({ apiKey: 'unscoped', openapi: { method: 'GET', path: '/capabilities', tags: ['probes'], summary: 'Optional subsystems wired in this deployment' } })
    .output(CapabilitiesResponse)
    .query(({ ctx }) =>
      capabilities({ limiter: ctx.deps.limiter, dashboard: ctx.deps.dashboard, events: ctx.deps.events, metricsEnabled: ctx.deps.config.metricsEnabled }),
    ),
});
