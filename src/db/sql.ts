// Plain SQL on the request's EntityManager, inside its transaction when there is one.
import { DriverException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

type Row = Record<string, unknown>;

/** Rows of a query; for hot paths and compare-and-set updates where SQL says it best. */
export async function sqlRows<T extends Row>(em: EntityManager, query: string, params: readonly unknown[] = []): Promise<T[]> {
  try {
    return await em.getConnection().execute<T[]>(query, params, 'all', em.getTransactionContext());
  } catch (error) {
    throw convert(em, error);
  }
}

/** Affected-row count of a statement (compare-and-set checks). */
export async function sqlRun(em: EntityManager, query: string, params: readonly unknown[] = []): Promise<number> {
  try {
    const result = await em.getConnection().execute<{ affectedRows: number }>(query, params, 'run', em.getTransactionContext());
    return result.affectedRows;
  } catch (error) {
    throw convert(em, error);
  }
}

/**
 * Raw queries surface the pg driver's own errors; the ORM's converter turns them into its exception
 * classes (UniqueConstraintViolationException, ...) that the one error mapping in errors.ts knows.
 */
function convert(em: EntityManager, error: unknown): unknown {
  return error instanceof Error && !(error instanceof DriverException) ? em.getDriver().convertException(error) : error;
}
