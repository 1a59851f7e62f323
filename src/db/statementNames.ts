// Statements sent by name: PostgreSQL parses and plans each once per connection instead of on every call.
import { createHash } from 'node:crypto';
import pg from 'pg';

/*
 * Kysely sends every query by its text, unnamed, so PostgreSQL parses and plans it on each call: for the
 * session lookup (a join plus a JSON subquery) that was ~270 µs of PostgreSQL's CPU per authenticated
 * request against ~180 µs to execute it, and a login's four statements in its transaction spent ~400 µs
 * being planned (bench/RESULTS.md). A statement meant to run prepared carries its name in a leading
 * comment (`preparedText`); the pool's clients (StatementNamingClient, db/ormConfig.ts) send such a text
 * under that name, so it is prepared once per connection wherever it runs: on any pooled connection or on
 * a transaction's. Everything else goes out as it always did.
 */
const OPEN = '/* ';
const MARK = `${OPEN}agent_org_`;

/**
 * `sql` marked to run prepared under a name derived from its text and `generation` (the number of times
 * it had to be prepared again after a migration, errors.ts isStalePlan). Names are at most 63 bytes in PostgreSQL.
 */
export function preparedText(sql: string, generation: number): string {
  return `${MARK}${createHash('sha256').update(sql).digest('hex').slice(0, 32)}_${String(generation)} */ ${sql}`;
}

/** The statement name a marked text carries; undefined for any other text. */
export function preparedNameOf(text: string): string | undefined {
  if (!text.startsWith(MARK)) return undefined;
  const end = text.indexOf(' */', MARK.length);
  return end === -1 ? undefined : text.slice(OPEN.length, end);
}

/** pg's client, sending a marked text as a named statement (pg prepares a name on first use per connection). */
export class StatementNamingClient extends pg.Client {}

// pg's query() has seven overloads; this forwards every call unchanged but for naming a marked text, so it
// is installed as a function instead of restating them. It reads pg's query at call time (tests spy on it).
Object.defineProperty(StatementNamingClient.prototype, 'query', {
  value: function query(this: pg.Client, config: unknown, ...rest: unknown[]): unknown {
    const name = typeof config === 'string' ? preparedNameOf(config) : undefined;
    const query: unknown = Reflect.get(pg.Client.prototype, 'query');
    if (typeof query !== 'function') throw new Error('pg.Client has no query()');
    const result: unknown = Reflect.apply(query, this, name === undefined ? [config, ...rest] : [{ name, text: config }, ...rest]);
    return result;
  },
});
