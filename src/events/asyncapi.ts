// The AsyncAPI 3.0 document of the WebSocket at /api/v1/ws, generated from the same zod schemas the server uses.
import { z } from 'zod';
import { EVENT_DEFINITIONS } from '../contracts/events.ts';
import { ErrorFrame, MAX_BAD_FRAMES, MAX_FRAME_BYTES, PingFrame, PongFrame, SubscribedFrame, SubscribeFrame, UnsubscribeFrame } from './frames.ts';

export const ASYNCAPI_VERSION = '3.0.0';

type Json = Record<string, unknown>;
type Message = { name: string; title: string; summary: string; schema: z.ZodType };

const CLIENT_MESSAGES: Message[] = [
  { name: 'subscribe', title: 'Subscribe', summary: 'Adds channels; with `since`, replays the retained events after that id first.', schema: SubscribeFrame },
  { name: 'unsubscribe', title: 'Unsubscribe', summary: 'Removes channels.', schema: UnsubscribeFrame },
  { name: 'ping', title: 'Ping', summary: 'Asks for a pong (an application-level liveness check).', schema: PingFrame },
];

const SERVER_MESSAGES: Message[] = [
  { name: 'subscribed', title: 'Subscribed', summary: 'The socket’s channels after a subscribe or unsubscribe.', schema: SubscribedFrame },
  { name: 'pong', title: 'Pong', summary: 'The answer to a ping.', schema: PongFrame },
  {
    name: 'error',
    title: 'Error',
    summary: `A refused frame: 2001 for a malformed frame or unknown channel (the ${String(MAX_BAD_FRAMES)}th closes the socket with 1008), 4000 for a \`since\` older than the retention window.`,
    schema: ErrorFrame,
  },
  ...EVENT_DEFINITIONS.map((d) => ({
    name: d.type,
    title: d.type,
    summary: `${d.description} Channel \`${d.channel}\`.`,
    schema: z.object({ type: z.literal('event'), event: d.schema }),
  })),
];

const DESCRIPTION = `Live updates of agent-org (CONTRACT §4.8) over one WebSocket per client.

**Connecting.** Get a ticket with \`POST /api/v1/auth/ws-ticket\` (single use, valid 30 s) and open
\`GET /api/v1/ws?ticket=<ticket>\`. A missing, unknown, expired or used ticket is refused with HTTP 401 (error 1000);
a user with ${'`EVENTS_MAX_STREAMS_PER_USER`'} open streams already gets 429 (error 5002). Refusals are ProblemDetails
(\`Accept: application/problem+json\`) or the error envelope, as for every endpoint.

**Events.** Every committed change produces exactly one event, written in the change's own transaction.
Ids are decimal strings that increase in commit order; per socket, events arrive in id order. Subscribe with
\`since\` set to the last id you saw to resume after a disconnect: the retained events after it are replayed,
then live ones follow with no gap and no duplicate. Events are kept \`EVENT_RETENTION_S\` (default 86400 s);
an older \`since\` gets error 4000 and the client should re-read the resources.

**Authorization** is decided per event: \`sessions\` events reach only the session's own user, and a role change
applies from the next event.

**Close codes.** 4001: the socket's session was revoked or its user deleted (the \`session.revoked\` event is sent
first). 1013: more than 1 MiB of unsent data (reconnect with \`since\`). 1008: ${String(MAX_BAD_FRAMES)} malformed frames.
1009: a frame larger than ${String(MAX_FRAME_BYTES / 1024)} KiB. 1001: the server is shutting down. The server pings every 25 s and drops a
socket it has not heard from for 60 s.`;

export function buildAsyncApiDocument(publicUrl: string, version: string): Json {
  const url = new URL(publicUrl);
  const schemas = {
    ...jsonSchemas(CLIENT_MESSAGES, 'input'),
    ...jsonSchemas(SERVER_MESSAGES, 'output'),
  };
  const messages: Json = {};
  for (const m of [...CLIENT_MESSAGES, ...SERVER_MESSAGES]) {
    messages[m.name] = { name: m.name, title: m.title, summary: m.summary, contentType: 'application/json', payload: { $ref: `#/components/schemas/${payloadName(m)}` } };
  }
  const channelMessages = Object.fromEntries([...CLIENT_MESSAGES, ...SERVER_MESSAGES].map((m) => [m.name, { $ref: `#/components/messages/${m.name}` }]));
  const ref = (name: string) => ({ $ref: `#/channels/events/messages/${name}` });
  const channel = { $ref: '#/channels/events' };
  return {
    asyncapi: ASYNCAPI_VERSION,
    info: {
      title: 'agent-org live events',
      version,
      description: DESCRIPTION,
      externalDocs: { description: 'Error codes', url: `${publicUrl}/docs/errors` },
    },
    servers: {
      'agent-org': {
        host: url.host,
        protocol: url.protocol === 'https:' ? 'wss' : 'ws',
        pathname: `${url.pathname.replace(/\/+$/, '')}/api/v1`,
        description: 'This deployment (PUBLIC_URL).',
        security: [{ $ref: '#/components/securitySchemes/ticket' }],
      },
    },
    defaultContentType: 'application/json',
    channels: {
      events: {
        address: '/ws',
        title: 'Live events',
        description: 'The one WebSocket: JSON text frames both ways.',
        messages: channelMessages,
        bindings: {
          ws: {
            method: 'GET',
            query: {
              type: 'object',
              properties: { ticket: { type: 'string', description: 'The ticket of POST /api/v1/auth/ws-ticket.' } },
              required: ['ticket'],
            },
            bindingVersion: '0.1.0',
          },
        },
      },
    },
    operations: {
      subscribe: {
        action: 'receive',
        channel,
        title: 'Subscribe to channels',
        messages: [ref('subscribe')],
        reply: { channel, messages: [ref('subscribed'), ref('error')] },
      },
      unsubscribe: {
        action: 'receive',
        channel,
        title: 'Unsubscribe from channels',
        messages: [ref('unsubscribe')],
        reply: { channel, messages: [ref('subscribed'), ref('error')] },
      },
      ping: { action: 'receive', channel, title: 'Ping', messages: [ref('ping')], reply: { channel, messages: [ref('pong')] } },
      events: {
        action: 'send',
        channel,
        title: 'Live events',
        summary: 'Events of the subscribed channels, in id order.',
        messages: EVENT_DEFINITIONS.map((d) => ref(d.type)),
      },
      errors: { action: 'send', channel, title: 'Refused frames', messages: [ref('error')] },
    },
    components: {
      schemas,
      messages,
      securitySchemes: {
        ticket: {
          type: 'httpApiKey',
          name: 'ticket',
          in: 'query',
          description: 'A single-use ticket of POST /api/v1/auth/ws-ticket (valid 30 s); a bad one is refused with 401, error 1000.',
        },
      },
    },
  };
}

function payloadName(message: Message): string {
  return `${message.name}.payload`;
}

/**
 * JSON Schemas (draft-07, AsyncAPI's default schema format) of the messages' payloads. Schemas the payloads
 * share (ApprovalResponse, ProblemDetail…) keep their zod `id` as their component name.
 */
function jsonSchemas(list: Message[], io: 'input' | 'output'): Json {
  const registry = z.registry<{ id: string }>();
  for (const m of list) registry.add(m.schema, { id: payloadName(m) });
  const generated = z.toJSONSchema(registry, { target: 'draft-7', io, uri: (id) => `#/components/schemas/${id}` });
  const text = JSON.stringify(generated.schemas).replaceAll('"#/components/schemas/__shared#/definitions/', '"#/components/schemas/');
  const parsed: unknown = JSON.parse(text);
  const all = isRecord(parsed) ? parsed : {};
  const { __shared: shared, ...own } = all;
  const definitions = isRecord(shared) && isRecord(shared.definitions) ? shared.definitions : {};
  const out: Json = {};
  for (const [name, schema] of Object.entries({ ...definitions, ...own })) {
    if (!isRecord(schema)) continue;
    const { $schema: _schema, $id: _id, ...rest } = schema;
    out[name] = rest;
  }
  return out;
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
