// Streamed REST bodies (RestMeta.stream): runs a procedure's StreamBody with the reply as its sink, with back-pressure.
import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamBody } from '../trpc.ts';

/**
 * A client that takes nothing for this long is cut: a stalled reader must not hold what the body holds (the
 * export's database connection) for ever.
 */
const STALL_LIMIT_MS = 60_000;

/** The client is gone (or cut): the body stops; there is nobody left to answer. */
class ClientGone extends Error {
  override name = 'ClientGone';
}

export function isStreamBody(value: unknown): value is StreamBody {
  return typeof value === 'function';
}

/**
 * Runs `body`. Its first write (or its end, when it writes nothing) sends the 200 in `mediaType`; an error
 * before that is thrown to the caller, which answers it as any other; an error after it cuts the response,
 * which a client sees as a truncated transfer. Fastify destroys the stream when the client disconnects,
 * which fails the pending or next write, so the body stops and releases what it holds. HEAD gets the status
 * and headers, and the body stops at its first write.
 */
export async function sendStream(req: FastifyRequest, reply: FastifyReply, body: StreamBody, mediaType: string): Promise<void> {
  // Room for one write of the body and a little more, so a body writing as fast as the client reads rarely waits.
  const out = new PassThrough({ highWaterMark: 128 * 1024 });
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    reply.code(200).type(mediaType);
    if (req.method === 'HEAD') {
      out.destroy();
      void reply.send();
    } else {
      void reply.send(out);
    }
  };
  try {
    await body(async (chunk) => {
      start();
      await writeTo(out, chunk);
    });
  } catch (error) {
    if (!started) throw error;
    if (!(error instanceof ClientGone)) out.destroy(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  start();
  out.end();
}

/** Writes `chunk`, resolving when the stream can take more; rejects when the client is gone or stalls past the limit. */
function writeTo(out: PassThrough, chunk: string | Uint8Array): Promise<void> {
  if (out.destroyed) return Promise.reject(new ClientGone());
  if (out.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (error: ClientGone | null) => {
      clearTimeout(stall);
      out.off('drain', onDrain);
      out.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => settle(null);
    const onClose = () => settle(new ClientGone());
    // Destroying the stream cuts the response (Fastify ends it with the source) and fires `close`.
    const stall = setTimeout(() => out.destroy(), STALL_LIMIT_MS);
    out.on('drain', onDrain);
    out.on('close', onClose);
  });
}
