// One-time WebSocket tickets, stored hashed so any instance can redeem them.
import { defineEntity, p } from '@mikro-orm/core';

export const WsTicketSchema = defineEntity({
  name: 'WsTicket',
  tableName: 'ws_tickets',
  properties: {
    ticketHash: p.string().length(64).primary(),
    userId: p.uuid().index('ws_tickets_user_id_idx'),
    /** The session the ticket was issued to, or else the API key (CONTRACT §3.5): the socket acts as it. */
    sessionId: p.string().length(64).nullable(),
    apiKeyId: p.uuid().nullable(),
    createdAt: p.datetime(3),
    expiresAt: p.datetime(3),
    redeemedAt: p.datetime(3).nullable(),
  },
  // Exactly one of the two: what the stream acts as.
  checks: [{ name: 'ws_tickets_holder_check', expression: 'num_nonnulls(session_id, api_key_id) = 1' }],
});
export class WsTicket extends WsTicketSchema.class {}
WsTicketSchema.setClass(WsTicket);
