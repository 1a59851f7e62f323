// The audit log's read (audit.list, CONTRACT §4.13). No event reports audit entries, so the list is read on
// arrival, on "load more" and when the filters change; its key sits outside every channel.
import { infiniteQueryOptions } from '@tanstack/preact-query';
import type { AuditFilters } from '../lib/audit.ts';
import { trpc } from './trpc.ts';

const PAGE = 50;
const firstPage = (): string | null => null;

export const auditKeys = {
  all: ['audit'],
  list: (filters: AuditFilters) => ['audit', 'list', filters] as const,
} as const;

export const auditQuery = (filters: AuditFilters) =>
  infiniteQueryOptions({
    queryKey: auditKeys.list(filters),
    queryFn: ({ pageParam }) => trpc.audit.list.query({ ...filters, limit: PAGE, cursor: pageParam }),
    initialPageParam: firstPage(),
    getNextPageParam: (last) => last.pagination.next_cursor,
    // A newer entry is a click on "Refresh" or a return to the page away; the log is not live.
    staleTime: 0,
  });
