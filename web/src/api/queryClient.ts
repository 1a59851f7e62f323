// The dashboard's one TanStack Query cache.
import { QueryClient } from '@tanstack/preact-query';
import { shouldRetry } from '../lib/problems.ts';

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: { retry: shouldRetry, staleTime: 15_000, refetchOnWindowFocus: true },
    mutations: { retry: false },
  },
});
