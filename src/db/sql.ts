// Plain SQL on the request's EntityManager, inside its transaction when there is one.
import type { EntityManager } from '@mikro-orm/postgresql';

type Row = Record<string, unknown>;

/** Rows of a query; for hot paths and compare-and-set updates where SQL says it best. */
export function sqlRows<T extends Row>(em: EntityManager, query: string, params: readonly unknown[] = []): Promise<T[]> {
  return em.getConnection().execute<T[]>(query, params, 'all', em.getTransactionContext());
}

/** Affected-row count of a statement (compare-and-set checks). */
export async function sqlRun(em: EntityManager, query: string, params: readonly unknown[] = []): Promise<number> {
  const result = await em.getConnection().execute<{ affectedRows: number }>(query, params, 'run', em.getTransactionContext());
  return result.affectedRows;
}
