// One-time WebSocket tickets: 30 s, single use, stored hashed, at most 5 pending per user.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../context/index.ts';
import type { Deps } from '../../context/deps.ts';
import { sqlRows, sqlRun } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import { newToken, sha256 } from './tokens.ts';

export const WS_TICKET_TTL_S = 30;
export const MAX_PENDING_TICKETS = 5;

export async function issueTicket(em: EntityManager, deps: Deps, actor: Actor): Promise<{ ticket: string; expires_in: 30 }> {
  return em.transactional(async (tx) => {
    const now = deps.clock.now();
    // Serialise a user's ticket requests so the cap holds under concurrency.
    await sqlRows(tx, 'select id from users where id = ? for update', [actor.userId]);
    const [pending] = await sqlRows<{ n: string }>(tx, 'select count(*) as n from ws_tickets where user_id = ? and redeemed_at is null and expires_at > ?', [
      actor.userId,
      now,
    ]);
    if (Number(pending?.n ?? 0) >= MAX_PENDING_TICKETS) throw ApiError.conflict(`at most ${MAX_PENDING_TICKETS} unredeemed tickets per user`);
    await sqlRun(tx, 'delete from ws_tickets where user_id = ? and expires_at <= ?', [actor.userId, now]);
    const ticket = newToken(32);
    await sqlRun(tx, 'insert into ws_tickets (ticket_hash, user_id, session_id, created_at, expires_at) values (?, ?, ?, ?, ?)', [
      sha256(ticket),
      actor.userId,
      actor.sessionId,
      now,
      new Date(now.getTime() + WS_TICKET_TTL_S * 1000),
    ]);
    return { ticket, expires_in: WS_TICKET_TTL_S };
  });
}

/** Redeems a ticket exactly once (any instance); null when unknown, expired, already used, or its session has ended. */
export async function redeemTicket(em: EntityManager, deps: Deps, ticket: string): Promise<{ userId: string; sessionId: string } | null> {
  const now = deps.clock.now();
  // A logged-out or revoked session must not open a stream with a ticket it obtained just before.
  const [row] = await sqlRows<{ user_id: string; session_id: string }>(
    em,
    `update ws_tickets t set redeemed_at = ? from sessions s
      where t.ticket_hash = ? and t.redeemed_at is null and t.expires_at > ? and s.id = t.session_id and s.revoked_at is null
      returning t.user_id, t.session_id`,
    [now, sha256(ticket), now],
  );
  return row ? { userId: row.user_id, sessionId: row.session_id } : null;
}
