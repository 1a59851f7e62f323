// One-time WebSocket tickets, stored hashed so any instance can redeem them.
import { defineEntity, p } from '@mikro-orm/core';

export const WsTicketSchema = defineEntity({
  name: 'WsTicket',
  tableName: 'ws_tickets',
  properties: {
    ticketHash: p.string().length(64).primary(),
    userId: p.uuid().index('ws_tickets_user_id_idx'),
    sessionId: p.string().length(64),
    createdAt: p.datetime(3),
    expiresAt: p.datetime(3),
    redeemedAt: p.datetime(3).nullable(),
  },
});
export class WsTicket extends WsTicketSchema.class {}
WsTicketSchema.setClass(WsTicket);
