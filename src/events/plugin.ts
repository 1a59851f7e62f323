// The events area's HTTP surface: GET /api/v1/ws (the WebSocket) and GET /api/v1/asyncapi.json, as one Fastify plugin.
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../context/deps.ts';
import { ApiError, toApiError } from '../errors.ts';
import { sendError } from '../rest/reply.ts';
import { SERVICE_VERSION } from '../version.ts';
import { buildAsyncApiDocument } from './asyncapi.ts';
import { MAX_FRAME_BYTES } from './frames.ts';
import type { Admission } from './runtime.ts';
import { EventSocket } from './socket.ts';

export const WS_PATH = '/api/v1/ws';
export const ASYNCAPI_PATH = '/api/v1/asyncapi.json';

// Tickets are base64url (32 random bytes); anything else cannot be one and is refused without a query.
const TicketQuery = z.object({ ticket: z.string().regex(/^[A-Za-z0-9_-]{16,512}$/) });
const OTHER_METHODS: HTTPMethods[] = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

export async function eventRoutes(app: FastifyInstance, opts: { deps: Deps; corsEnabled?: boolean }): Promise<void> {
  const { deps } = opts;
  const runtime = deps.events;
  const { publicUrl } = deps.config;
  const refuse = (req: FastifyRequest, reply: FastifyReply, error: ApiError) => sendError(req, reply, error, publicUrl);

  await app.register(websocket, {
    options: { maxPayload: MAX_FRAME_BYTES },
    // Instead of the plugin's own close without a code: sockets get 1001, subscriptions end, clients
    // reconnect. That waits until the server has stopped accepting (Fastify closes it right after
    // preClose), and the connections the ended subscriptions leave idle are closed as they appear: a
    // reconnecting EventSource must meet a refused connection (and retry, elsewhere), not this instance's
    // 503 on a kept-alive one, which it takes as final.
    preClose: (done) => {
      const deadline = Date.now() + 1000;
      const endStreams = () => {
        if (app.server.listening && Date.now() < deadline) {
          setTimeout(endStreams, 5);
          return;
        }
        runtime.shutdownStreams();
        idleSweep = setInterval(() => app.server.closeIdleConnections(), 10);
        idleSweep.unref();
      };
      setImmediate(endStreams);
      done();
    },
  });

  let idleSweep: NodeJS.Timeout | undefined;
  app.addHook('onClose', async () => clearInterval(idleSweep));

  const admissions = new WeakMap<FastifyRequest, Admission>();
  const sockets = new Set<EventSocket>();

  app.get(
    WS_PATH,
    {
      websocket: true,
      // Runs before the upgrade: a refused ticket or a full quota is an HTTP answer in the usual error format.
      preValidation: async (req, reply) => {
        const query = TicketQuery.safeParse(req.query);
        if (!query.success) return refuse(req, reply, ApiError.unauthorized('a ticket is required: GET /api/v1/ws?ticket=<ticket of POST /auth/ws-ticket>'));
        const em = deps.orm.em.fork();
        try {
          if (!req.ws) {
            // Authentication before request shape (CONTRACT §2.2); the ticket is checked, not used.
            if (!(await runtime.ticketIsRedeemable(em, query.data.ticket))) return refuse(req, reply, ApiError.unauthorized('invalid, expired or already used ticket'));
            return refuse(req, reply, ApiError.badRequest('this endpoint only accepts WebSocket upgrades (Connection: Upgrade, Upgrade: websocket)'));
          }
          admissions.set(req, await runtime.admitTicket(em, query.data.ticket));
        } catch (error) {
          return refuse(req, reply, toApiError(error));
        }
      },
    },
    (socket, req) => {
      const admission = admissions.get(req);
      if (!admission) return void socket.terminate();
      const eventSocket = new EventSocket(socket, runtime, admission, { requestId: req.id, publicUrl, log: req.log });
      sockets.add(eventSocket);
      socket.on('close', () => sockets.delete(eventSocket));
    },
  );

  runtime.websocketServed = true;

  // One timer for every socket: ping when due, drop the silent ones.
  const { pingIntervalMs, silenceLimitMs } = runtime.timings;
  const heartbeat = setInterval(
    () => {
      const now = Date.now();
      for (const socket of sockets) socket.heartbeat(now, pingIntervalMs, silenceLimitMs);
    },
    Math.max(20, Math.min(pingIntervalMs, silenceLimitMs) / 5),
  );
  heartbeat.unref();
  app.addHook('onClose', async () => clearInterval(heartbeat));

  let document: string | undefined;
  app.get(ASYNCAPI_PATH, async (_req, reply) => {
    document ??= JSON.stringify(buildAsyncApiDocument(publicUrl, SERVICE_VERSION));
    return reply.type('application/json; charset=utf-8').send(document);
  });

  // Wrong method on these paths: 405 with Allow, as on every other /api/v1 path.
  for (const url of [WS_PATH, ASYNCAPI_PATH]) {
    app.route({
      method: OTHER_METHODS.filter((m) => !(opts.corsEnabled === true && m === 'OPTIONS')),
      url,
      handler: (req, reply) => {
        reply.header('allow', 'GET, HEAD');
        return refuse(req, reply, ApiError.methodNotAllowed(`method ${req.method} not allowed; allowed: GET, HEAD`));
      },
    });
  }
}
