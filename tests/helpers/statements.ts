// What the pg clients send: for tests that count or inspect the statements an operation runs.
import pg from 'pg';
import { vi } from 'vitest';

/** A statement as sent: its text, and whether it went out as a named (prepared) statement. */
export type SentStatement = { text: string; named: boolean };

/**
 * Records every statement sent from now on (on any pg client: the pool, a transaction's, LISTEN); the
 * returned function lists them in order. The spy stays until vi.restoreAllMocks().
 */
export function recordStatements(): () => SentStatement[] {
  const query = vi.spyOn(pg.Client.prototype, 'query');
  return () => query.mock.calls.flatMap(([sent]: unknown[]) => statementOf(sent));
}

/** The statements sent while `run` runs, in order. */
export async function statementsDuring(run: () => Promise<void>): Promise<SentStatement[]> {
  const query = vi.spyOn(pg.Client.prototype, 'query');
  try {
    await run();
    return query.mock.calls.flatMap(([sent]: unknown[]) => statementOf(sent));
  } finally {
    query.mockRestore();
  }
}

function statementOf(sent: unknown): SentStatement[] {
  if (typeof sent === 'string') return [{ text: sent, named: false }];
  if (typeof sent !== 'object' || sent === null || !('text' in sent)) return [];
  return [{ text: String(sent.text), named: 'name' in sent && typeof sent.name === 'string' }];
}
