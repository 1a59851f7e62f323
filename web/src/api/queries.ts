// The dashboard's reads: one TanStack Query definition per tRPC query, keyed by channel (keys.ts).
import { infiniteQueryOptions, queryOptions } from '@tanstack/preact-query';
import { problemOf, type RouterInputs, type RouterOutputs } from '../../../src/client/index.ts';
import { keys } from './keys.ts';
import { trpc } from './trpc.ts';

export type ApprovalFilters = Omit<RouterInputs['approvals']['list'], 'cursor' | 'limit'>;

const PAGE = 20;
/** The largest page a list gives (CONTRACT §2.3). */
const MAX_PAGE = 200;
/** The cursor of a list's first page, typed as every later cursor is. */
const firstPage = (): string | null => null;

export const queries = {
  setupStatus: () => queryOptions({ queryKey: keys.setupStatus, queryFn: () => trpc.setup.status.query() }),

  /** The signed-in user, or null when nobody is (a 401 here is an answer, not an error). */
  me: () =>
    queryOptions({
      queryKey: keys.me,
      queryFn: async () => {
        try {
          return await trpc.auth.me.query();
        } catch (error) {
          if (problemOf(error)?.status === 401) return null;
          throw error;
        }
      },
      // Changes only by this tab's own actions (which write it) or a role change (invalidated by channel).
      staleTime: Infinity,
    }),

  /**
   * The signed-in user's two-factor status, asked with `me` (one batched request): it says whether the role
   * requires two-factor authentication before anything else can be done. Null when nobody is signed in or the
   * password must be changed first (that gate comes before this one).
   */
  mfaStatus: () =>
    queryOptions({
      queryKey: keys.mfa,
      queryFn: async () => {
        try {
          return await trpc.auth.mfa.status.query();
        } catch (error) {
          const status = problemOf(error)?.status;
          if (status === 401 || status === 403) return null;
          throw error;
        }
      },
      staleTime: Infinity,
    }),

  approvals: (filters: ApprovalFilters) =>
    infiniteQueryOptions({
      queryKey: keys.approvals(filters),
      queryFn: ({ pageParam }) => trpc.approvals.list.query({ ...filters, limit: PAGE, cursor: pageParam }),
      initialPageParam: firstPage(),
      getNextPageParam: (last) => last.pagination.next_cursor,
    }),

  users: () =>
    infiniteQueryOptions({
      queryKey: keys.users,
      queryFn: ({ pageParam }) => trpc.users.list.query({ limit: 50, cursor: pageParam }),
      initialPageParam: firstPage(),
      getNextPageParam: (last) => last.pagination.next_cursor,
    }),

  /** Every user, page after page: the pickers of the API keys page (an organization has tens, not thousands). */
  everyone: () =>
    queryOptions({
      queryKey: keys.everyone,
      queryFn: async () => {
        const users: RouterOutputs['users']['list']['items'] = [];
        let cursor: string | null = null;
        do {
          const page = await trpc.users.list.query({ limit: MAX_PAGE, cursor });
          users.push(...page.items);
          cursor = page.pagination.next_cursor;
        } while (cursor !== null);
        return users;
      },
    }),

  /** `userId` null: the caller's own keys, or every key when the caller is the CEO. */
  apiKeys: (userId: string | null) =>
    infiniteQueryOptions({
      queryKey: keys.apiKeys(userId),
      queryFn: ({ pageParam }) => trpc.apiKeys.list.query({ ...(userId === null ? {} : { user_id: userId }), limit: PAGE, cursor: pageParam }),
      initialPageParam: firstPage(),
      getNextPageParam: (last) => last.pagination.next_cursor,
    }),

  sessions: (scope: 'own' | 'all') => queryOptions({ queryKey: keys.sessions(scope), queryFn: () => trpc.auth.listSessions.query({ scope }) }),

  stages: (taskId: string) => queryOptions({ queryKey: keys.stages(taskId), queryFn: () => trpc.reviews.listStages.query({ task_id: taskId }) }),

  templates: () => queryOptions({ queryKey: keys.templates, queryFn: () => trpc.setup.templates.query(), staleTime: Infinity }),
  // A roster has at most 100 agents (CONTRACT §4.4): one page holds it.
  agents: () => queryOptions({ queryKey: keys.agents, queryFn: async () => (await trpc.setup.listAgents.query({ limit: 200 })).items }),
  availableLocales: () => queryOptions({ queryKey: keys.availableLocales, queryFn: () => trpc.setup.availableLocales.query(), staleTime: Infinity }),
  locales: () => queryOptions({ queryKey: keys.locales, queryFn: () => trpc.setup.getLocales.query() }),
  presets: () =>
    queryOptions({ queryKey: keys.presets, queryFn: async () => (await trpc.setup.personalityPresets.query({ limit: 200 })).items, staleTime: Infinity }),

  health: () => queryOptions({ queryKey: keys.health, queryFn: () => trpc.probes.healthz.query(), staleTime: 0 }),
  readiness: () => queryOptions({ queryKey: keys.readiness, queryFn: () => trpc.probes.readyz.query(), staleTime: 0, retry: false }),
  capabilities: () => queryOptions({ queryKey: keys.capabilities, queryFn: () => trpc.probes.capabilities.query() }),
};
