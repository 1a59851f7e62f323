// The application router: every procedure of every area, the AppRouter type the dashboard imports, createCaller.
import { createCallerFactory, router } from '../trpc.ts';
import { apiKeysRouter } from './apiKeys/router.ts';
import { approvalsRouter } from './approvals/router.ts';
import { authRouter } from './auth/router.ts';
import { eventsRouter } from './events/router.ts';
import { probesRouter } from './probes/router.ts';
import { reviewsRouter } from './reviews/router.ts';
import { setupRouter } from './setup/router.ts';
import { usersRouter } from './users/router.ts';

export const appRouter = router({
  probes: probesRouter,
  auth: authRouter,
  users: usersRouter,
  setup: setupRouter,
  approvals: approvalsRouter,
  reviews: reviewsRouter,
  events: eventsRouter,
  apiKeys: apiKeysRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
