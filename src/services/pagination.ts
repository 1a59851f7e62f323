// Keyset pagination: HMAC-signed opaque cursors bound to one list, and the page/limit schemas every list uses.
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ApiError } from '../errors.ts';
import { hmac } from './hmac.ts';

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

/** A keyset position: the sort-key values of the last row of a page. */
export type Position = readonly (string | number)[];
const PositionSchema = z.array(z.union([z.string(), z.number()])).min(1).max(8);
const Payload = z.strictObject({ l: z.string(), p: PositionSchema });

export function encodeCursor(secret: Buffer, list: string, position: Position): string {
  const body = Buffer.from(JSON.stringify({ l: list, p: position })).toString('base64url');
  return `${body}.${hmac(secret, body)}`;
}

/** Verifies and decodes a cursor of `list`; anything else (tampered, foreign, garbage) is 400/2001. */
export function decodeCursor(secret: Buffer, list: string, cursor: string): Position {
  const invalid = () => ApiError.badRequest('query.cursor: invalid or expired cursor');
  const dot = cursor.indexOf('.');
  if (dot <= 0) throw invalid();
  const body = cursor.slice(0, dot);
  const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
  const expected = Buffer.from(hmac(secret, body), 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const parsed = Payload.safeParse(json);
  if (!parsed.success || parsed.data.l !== list) throw invalid();
  return parsed.data.p;
}


/**
 * Builds a page from rows fetched with `LIMIT limit + 1`: the extra row only tells whether more exist.
 */
export function toPage<Row, Item>(
  rows: readonly Row[],
  opts: { limit: number; secret: Buffer; list: string; positionOf: (row: Row) => Position; toItem: (row: Row) => Item },
): { items: Item[]; pagination: Pagination } {
  const hasMore = rows.length > opts.limit;
  const pageRows = hasMore ? rows.slice(0, opts.limit) : rows;
  const last = pageRows.at(-1);
  return {
    items: pageRows.map(opts.toItem),
    pagination: {
      limit: opts.limit,
      next_cursor: hasMore && last !== undefined ? encodeCursor(opts.secret, opts.list, opts.positionOf(last)) : null,
      has_more: hasMore,
    },
  };
}
