// audit.list (tRPC and REST) and the REST-only GET /audit/export (CONTRACT §4.13, §4.7).
import { z } from 'zod';
import { AuditPage, ExportAuditInput, ListAuditInput } from '../../contracts/audit.ts';
import * as audit from '../../services/audit/audit.ts';
import { auditorProcedure, router, type StreamBody } from '../../trpc.ts';

const FILTERS = 'Filters: `type` (exact, or a prefix ending in `.` such as `auth.`), `actor`, `target_id`, `since` (inclusive), `until` (exclusive).';

export const auditRouter = router({
  list: auditorProcedure
    .meta({
      apiKey: 'audit:read',
      openapi: {
        method: 'GET',
        path: '/audit',
        tags: ['audit'],
        summary: 'List audit entries, newest first',
        description: FILTERS,
      },
      rest: { list: true },
    })
    .input(ListAuditInput)
    .output(AuditPage)
    .query(({ ctx, input }) => audit.listAudit({ em: ctx.em, secret: ctx.deps.secret }, input)),
});

/**
 * The export is served by the REST facade only (CONTRACT §4.7): its body is a stream, which tRPC's links do
 * not carry as one. It is therefore not in the application router (routers/index.ts: restRouter).
 */
export const auditExport = auditorProcedure
  .meta({
    apiKey: 'audit:read',
    openapi: {
      method: 'GET',
      path: '/audit/export',
      tags: ['audit'],
      summary: 'Export audit entries as NDJSON, oldest first',
      description: `${FILTERS} One AuditEntry per line (\`application/x-ndjson\`), streamed however many match; one export in flight per user.`,
    },
    rest: { stream: { mediaType: 'application/x-ndjson', item: 'AuditEntry' } },
    errors: { 5002: 'An export by the same user is still running (also when rate limits are off).' },
  })
  .input(ExportAuditInput)
  .output(z.custom<StreamBody>((value) => typeof value === 'function').meta({ override: { type: 'string' } }))
  .query(({ ctx, input }): StreamBody => (write) => audit.exportAudit({ em: ctx.em, actor: ctx.actor }, input, write));
