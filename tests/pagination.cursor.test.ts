import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, toPage } from '../src/services/pagination.ts';

const secret = randomBytes(32);

describe('signed keyset cursors', () => {
  it('round-trip a position for the same list', () => {
    const cursor = encodeCursor(secret, 'users', ['2026-11-21T10:00:00.000Z', 'u1']);
    expect(decodeCursor(secret, 'users', cursor)).toEqual(['2026-11-21T10:00:00.000Z', 'u1']);
  });

  it('reject a tampered cursor with 400/2001', () => {
    const cursor = encodeCursor(secret, 'users', ['a', 'b']);
    const [body, sig] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify({ l: 'users', p: ['z', 'z'] })).toString('base64url');
    for (const bad of [`${forged}.${sig}`, `${body}.${sig}x`, `${body}`, 'garbage', '.', `${body}.`]) {
      expect(() => decodeCursor(secret, 'users', bad)).toThrow(expect.objectContaining({ errorCode: 2001 }));
    }
  });

  it('reject a cursor of another list', () => {
    const cursor = encodeCursor(secret, 'approvals', ['a']);
    expect(() => decodeCursor(secret, 'users', cursor)).toThrow(expect.objectContaining({ errorCode: 2001 }));
  });

  it('reject a cursor signed with another secret', () => {
    const cursor = encodeCursor(randomBytes(32), 'users', ['a']);
    expect(() => decodeCursor(secret, 'users', cursor)).toThrow(expect.objectContaining({ errorCode: 2001 }));
  });
});

describe('pages', () => {
  const opts = { limit: 2, secret, list: 'n', positionOf: (n: number) => [n], toItem: (n: number) => n };

  it('have a next cursor only when more rows exist', () => {
    expect(toPage([1, 2, 3], opts)).toMatchObject({ items: [1, 2], pagination: { limit: 2, has_more: true } });
    expect(toPage([1, 2, 3], opts).pagination.next_cursor).toEqual(expect.any(String));
    expect(toPage([1, 2], opts).pagination).toEqual({ limit: 2, next_cursor: null, has_more: false });
  });

  it('past the end is an empty page without a cursor', () => {
    expect(toPage([], opts)).toEqual({ items: [], pagination: { limit: 2, next_cursor: null, has_more: false } });
  });
});
