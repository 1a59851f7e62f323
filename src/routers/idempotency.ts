// Idempotency-Key for the creates that may be retried (CONTRACT §2.5): the procedure's side of the rule.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { z } from 'zod';
import type { Context } from '../context/index.ts';
import { runIdempotent } from '../services/idempotency/idempotency.ts';
import type { Actor } from '../contracts/actor.ts';

type AuthedContext = Pick<Context, 'em' | 'deps' | 'credentials' | 'response'> & { actor: Actor };

/**
 * Runs `execute` under the request's Idempotency-Key, if it sent one. A repeat answers the first result
 * again, validated by the procedure's output schema, with `Idempotent-Replayed: true`.
 */
export async function idempotently<Output extends z.ZodType>(
  ctx: AuthedContext,
  request: { operation: string; input: unknown; output: Output },
  execute: (em: EntityManager) => Promise<z.output<Output>>,
): Promise<z.output<Output>> {
  const key = ctx.credentials.idempotencyKey;
  if (key === undefined) return execute(ctx.em);
  const outcome = await runIdempotent(
    { em: ctx.em, clock: ctx.deps.clock, secret: ctx.deps.secret },
    { userId: ctx.actor.userId, key, operation: request.operation, input: request.input },
    execute,
  );
  if (!outcome.replayed) return outcome.result;
  ctx.response.setHeader('Idempotent-Replayed', 'true');
  return request.output.parse(outcome.response);
}
