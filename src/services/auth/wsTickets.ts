// One-time WebSocket tickets: 30 s, single use, stored hashed, at most 5 pending per user.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../errors.ts';
import type { WsTicketResponse } from '../../contracts/auth.ts';
import { lockUser } from '../users/store.ts';
import * as store from './store.ts';
import { newToken, sha256 } from './tokens.ts';
import type { Clock } from '../../contracts/clock.ts';
import type { Actor } from '../../contracts/actor.ts';

export const WS_TICKET_TTL_S = 30;
export const MAX_PENDING_TICKETS = 5;

export async function issueTicket({ em, clock, actor }: { em: EntityManager; clock: Clock; actor: Actor }): Promise<WsTicketResponse> {
  return em.transactional(async (tx) => {
    const now = clock.now();
    // Serialise a user's ticket requests so the cap holds under concurrency.
    await lockUser(tx, actor.userId);
    if ((await store.countPendingTickets(tx, actor.userId, now)) >= MAX_PENDING_TICKETS) {
      throw ApiError.conflict(`at most ${MAX_PENDING_TICKETS} unredeemed tickets per user`);
    }
    await store.deleteExpiredTickets(tx, actor.userId, now);
    const ticket = newToken(32);
    await store.insertTicket(tx, {
      ticketHash: sha256(ticket),
      userId: actor.userId,
      // The socket acts as what asked for the ticket: the session, or the API key (CONTRACT §3.5).
      sessionId: actor.sessionId,
      apiKeyId: actor.apiKey?.id ?? null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + WS_TICKET_TTL_S * 1000),
    });
    return { ticket, expires_in: WS_TICKET_TTL_S };
  });
}

/**
 * Redeems a ticket exactly once (any instance): who it lets in, or null when it is unknown, expired,
 * already used, or its session or API key has ended (a logged-out session or a revoked key must not open a
 * stream with a ticket it obtained just before). Run it in the transaction that admits the stream, so a refused admission
 * leaves the ticket unused.
 */
export async function redeemTicket({ em, clock }: { em: EntityManager; clock: Clock }, ticket: string): Promise<store.TicketHolder | null> {
  return store.redeemTicket(em, sha256(ticket), clock.now());
}

/** Whether `ticket` would be redeemed now, without using it (for a request that is not an upgrade). */
export async function ticketIsRedeemable({ em, clock }: { em: EntityManager; clock: Clock }, ticket: string): Promise<boolean> {
  return store.ticketIsRedeemable(em, sha256(ticket), clock.now());
}
