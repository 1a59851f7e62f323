// The application router: every procedure of every area, the AppRouter type the dashboard imports, createCaller.
import { createCallerFactory, router } from '../trpc.ts';
import { apiKeysRouter } from './apiKeys/router.ts';
import { approvalsRouter } from './approvals/router.ts';
import { auditExport, auditRouter } from './audit/router.ts';
import { authRouter } from './auth/router.ts';
import { eventsRouter } from './events/router.ts';
import { probesRouter } from './probes/router.ts';
import { reviewsRouter } from './reviews/router.ts';
import { setupRouter } from './setup/router.ts';
import { usersRouter } from './users/router.ts';
import { webhooksRouter } from './webhooks/router.ts';

export const appRouter = router({
  probes: probesRouter,
  auth: authRouter,
  users: usersRouter,
  setup: setupRouter,
  approvals: approvalsRouter,
  reviews: reviewsRouter,
  events: eventsRouter,
  apiKeys: apiKeysRouter,
  audit: auditRouter,
  webhooks: webhooksRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);

/**
 * What the REST facade serves: every procedure of the application router, and those only REST carries (a
 * streamed body, CONTRACT §4.7: GET /audit/export), which the dashboard's client therefore never sees.
 */
export const restRouter = router({
  ...appRouter._def.record,
  audit: { ...auditRouter._def.record, export: auditExport },
});
