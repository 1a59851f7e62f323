// Statements built and compiled once per process, then run prepared with each call's values.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Compilable, CompiledQuery } from 'kysely';
import { isStalePlan } from '../errors.ts';
import { executePrepared } from './prepared.ts';
import { preparedText } from './statementNames.ts';

/**
 * `compiledStatement((em, values) => query)` builds the query once, on first use, with a stand-in for
 * each of `values`, and every call then only puts the call's values where the stand-ins ended up.
 * Building a statement with Kysely and passing it through the ORM's plugin costs more CPU than a small
 * statement costs PostgreSQL: a login spent about a quarter of its main-thread time there
 * (bench/RESULTS.md). It runs as a named prepared statement, in a transaction or not (db/prepared.ts).
 *
 * `build` must pass each value on untouched, as a value of the query (not decide the statement's shape
 * with it, nor compute with it): the first call checks that each stand-in arrived as a parameter,
 * unchanged or converted as the ORM converts a JSON column's value, and throws otherwise (a computation
 * that leaves the stand-in's text as it was cannot be told). Rows are converted as any query's.
 */
export function compiledStatement<V extends Record<string, unknown>, R>(build: (em: EntityManager, values: V) => Compilable<R>): (em: EntityManager, values: V) => Promise<R[]> {
  let plan: Plan<R> | undefined;
  return async (em, values) => {
    const current = (plan ??= planOf(em, build));
    try {
      return await execute(em, current, values);
    } catch (error) {
      if (!isStalePlan(error)) throw error;
      // Prepared again under the next name, once however many calls fail at the same time.
      if (plan === current) plan = nextGeneration(current);
      // Outside a transaction nothing ran (PostgreSQL refuses a stale plan first), so once more is safe,
      // a write too. Inside one the transaction is aborted: the error ends the request as retryable (503).
      if (em.isInTransaction()) throw error;
      return execute(em, plan, values);
    }
  };
}

async function execute<R>(em: EntityManager, plan: Plan<R>, values: Record<string, unknown>): Promise<R[]> {
  const query: CompiledQuery<R> = { ...plan.query, parameters: plan.slots.map((fill) => fill(values)) };
  return (await executePrepared(em, query)).rows;
}

function nextGeneration<R>(plan: Plan<R>): Plan<R> {
  const generation = plan.generation + 1;
  return { ...plan, generation, query: { ...plan.query, sql: preparedText(plan.sql, generation) } };
}

type Slot = (values: Record<string, unknown>) => unknown;
/** The statement as sent (its text marked with its name), its text as built, and where each value goes. */
type Plan<R> = { query: CompiledQuery<R>; sql: string; generation: number; slots: readonly Slot[] };

// A NUL cannot reach PostgreSQL in a text value, so no real constant of a query looks like this.
const STAND_IN = '\u0000value:';

function planOf<V extends Record<string, unknown>, R>(em: EntityManager, build: (em: EntityManager, values: V) => Compilable<R>): Plan<R> {
  const asked = new Set<string>();
  const standIns = new Proxy<Record<string, string>>(
    {},
    {
      get: (_, name) => {
        asked.add(String(name));
        return STAND_IN + String(name);
      },
    },
  );
  // The one place a value is not what its type says: a stand-in string, which build only passes on.
  const query = build(em, standIns as V).compile();
  const placed = new Set<string>();
  const slots = query.parameters.map((parameter): Slot => {
    const name = standInName(parameter);
    if (name !== undefined) {
      placed.add(name);
      return (values) => values[name];
    }
    const jsonName = jsonStandInName(parameter);
    if (jsonName !== undefined) {
      placed.add(jsonName);
      // What the ORM's JsonType does to a JSON column's value (null stays SQL NULL).
      return (values) => (values[jsonName] == null ? values[jsonName] : JSON.stringify(values[jsonName]));
    }
    if (typeof parameter === 'string' && parameter.includes(STAND_IN)) throw new Error(`compiledStatement: a value was converted in a way it cannot repeat: ${JSON.stringify(parameter)}`);
    return () => parameter;
  });
  for (const name of asked) if (!placed.has(name)) throw new Error(`compiledStatement: "${name}" was used to build the statement, not passed as one of its values`);
  return { query: { ...query, sql: preparedText(query.sql, 0) }, sql: query.sql, generation: 0, slots };
}

function standInName(parameter: unknown): string | undefined {
  return typeof parameter === 'string' && parameter.startsWith(STAND_IN) ? parameter.slice(STAND_IN.length) : undefined;
}

/** The name of a stand-in the ORM JSON-encoded (a jsonb column's value); undefined for anything else. */
function jsonStandInName(parameter: unknown): string | undefined {
  if (typeof parameter !== 'string' || !parameter.startsWith(JSON.stringify(STAND_IN).slice(0, -1))) return undefined;
  try {
    return standInName(JSON.parse(parameter));
  } catch {
    return undefined;
  }
}
