// exportLines.ts: the export's lines are the same however PostgreSQL's binary COPY is cut into chunks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyLines } from '../src/services/audit/exportLines.ts';
import { inExportTransaction } from '../src/services/audit/store.ts';
import { seedAuditEntries } from './helpers/audit.ts';
import { startTestService, type TestService } from './helpers/service.ts';

let svc: TestService;
let copy: Buffer;
beforeAll(async () => {
  svc = await startTestService();
  await seedAuditEntries(svc, { count: 30, actor: 'chunked', pad: 40 });
  // One batch's COPY, as the export reads it.
  const chunks: Buffer[] = [];
  await inExportTransaction(svc.deps.orm.em.fork(), { actor: 'chunked' }, 100, (reader) => reader.batch(null, (chunk) => chunks.push(chunk)));
  copy = Buffer.concat(chunks);
});
afterAll(() => svc.close());

function linesOf(chunkSize: number) {
  const lines = new CopyLines();
  for (let at = 0; at < copy.length; at += chunkSize) lines.push(copy.subarray(at, at + chunkSize));
  const { lines: out, count, last } = lines.end();
  return { text: Buffer.concat(out).toString('utf8'), count, last };
}

describe('CopyLines', () => {
  it('gives the same lines, count and last position whether the COPY comes whole or in chunks of any size (the header and rows cut anywhere)', () => {
    const whole = linesOf(copy.length);
    expect(whole.count).toBe(30);
    expect(whole.text.split('\n')).toHaveLength(31);
    const lastLine = JSON.parse(whole.text.split('\n')[29] ?? '') as { id: string; occurred_at: string };
    expect(whole.last).toEqual({ occurredAt: lastLine.occurred_at, id: lastLine.id });
    for (const size of [1, 2, 3, 7, 19, 64, 1000]) expect(linesOf(size), `chunks of ${String(size)} bytes`).toEqual(whole);
  });

  it('refuses a COPY that ends early, and bytes that are not a binary COPY', () => {
    const cut = new CopyLines();
    cut.push(copy.subarray(0, copy.length - 1));
    expect(() => cut.end()).toThrow(/ended early/);
    expect(() => new CopyLines().push(Buffer.from('id\toccurred_at\n1\t2026-01-01\n'))).toThrow(/not a binary COPY/);
  });
});
