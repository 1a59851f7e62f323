// The page/limit query fields and the page shape every paginated list shares (SERVICE-SPEC §8, CONTRACT §2.3).
import { z } from 'zod';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** Query fields of every paginated list (SERVICE-SPEC §8). */
export const pageQueryShape = {
  cursor: z.string().max(512).nullish().describe('Opaque position taken from `pagination.next_cursor` of the previous page.'),
  limit: z.int().min(1).max(MAX_PAGE_SIZE).nullish().describe(`Page size, 1..${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}.`),
};

export const Pagination = z
  .object({
    limit: z.int(),
    next_cursor: z.string().nullable(),
    has_more: z.boolean(),
  })
  .meta({ id: 'Pagination' });
export type Pagination = z.infer<typeof Pagination>;

/** Output of a list procedure; the REST facade turns it into a PaginatedResponse envelope. */
export const page = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), pagination: Pagination });
