// Strong ETags of resource representations (CONTRACT §2.1) and the If-Match check mutations share.
import { createHash } from 'node:crypto';
import { ApiError } from '../errors.ts';

export function etagOf(representation: unknown): string {
  return `"${createHash('sha256').update(JSON.stringify(representation)).digest('base64url').slice(0, 27)}"`;
}

/** Throws 409/4002 when an If-Match header was sent and names none of the current representation's tags. */
export function assertIfMatch(ifMatch: string | undefined, current: unknown): void {
  if (ifMatch === undefined) return;
  const wanted = ifMatch.split(',').map((t) => t.trim());
  if (wanted.includes('*')) return;
  if (!wanted.includes(etagOf(current))) throw ApiError.versionConflict();
}
