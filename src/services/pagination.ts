// Keyset pagination: HMAC-signed opaque cursors bound to one list, and pages built from rows fetched one too many.
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Pagination } from '../contracts/pagination.ts';
import { ApiError } from '../errors.ts';
import { hmac } from './hmac.ts';

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
