// Every error the process sends, in our one shape (CONTRACT §2.2), also those decided below the router.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import { ApiError, toApiError, toErrorEnvelope, toProblem } from '../errors.ts';
import { sendError } from '../rest/reply.ts';
import { logCompletedRequest } from './accessLog.ts';
import type { HeadersFor } from './responseHeaders.ts';

/**
 * Longest request target served; longer ones get 414. Node refuses a head (request line plus headers)
 * over its 16 KiB `maxHeaderSize` with 431 before we see it. tRPC batch URLs up to this length are served:
 * the router's parameter limit is the same, so a long `/api/trpc/a,b,c…` path is never cut by it.
 */
export const MAX_URL_LENGTH = 8192;

type Options = { config: Config; headers: HeadersFor };

async function errorHandlers(app: FastifyInstance, opts: Options): Promise<void> {
  const { publicUrl } = opts.config;
  app.decorateReply('sentError', null);
  app.setErrorHandler((error: FastifyError | ApiError, req, reply) => sendError(req, reply, fastifyError(error), publicUrl));
  app.setNotFoundHandler((req, reply) =>
    sendError(req, reply, ApiError.routeNotFound(`no endpoint ${req.method} ${req.url.split('?')[0] ?? ''}`), publicUrl),
  );
  // Callback style: this runs on every request, and an async hook costs a promise each time.
  app.addHook('onRequest', (req, reply, done) => {
    if (req.url.length <= MAX_URL_LENGTH) return done();
    void sendError(req, reply, new ApiError(2001, `request target too long (max ${MAX_URL_LENGTH} characters)`, { status: 414 }), publicUrl);
  });
}

export default fp(errorHandlers, { name: 'error-handlers' });

/** Fastify's own failures (body too large, bad content length, ...) in our error model. */
export function fastifyError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return ApiError.badRequest('body: too large (max 1 MiB)');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return ApiError.badRequest(`body: ${error.message}`);
    default:
      if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
        return ApiError.badRequest(error.message);
      }
      return toApiError(error);
  }
}

/**
 * Fastify's `frameworkErrors`: failures of routing itself, which no hook sees, so the request id and
 * security headers are set here. An undecodable path (`%FF`, the UTF-8 of a lone surrogate) is 400/2001.
 */
export function frameworkErrorHandler(opts: Options) {
  return (error: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    // Fastify runs no response hooks for these requests, so the access-log line is written here.
    const started = performance.now();
    reply.raw.once('finish', () => logCompletedRequest(req, reply, performance.now() - started));
    reply.headers(opts.headers(req.url));
    reply.header('x-request-id', req.id);
    const apiError =
      error.code === 'FST_ERR_BAD_URL'
        ? ApiError.badRequest('path: invalid percent-encoding or UTF-8 in the URL')
        : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new ApiError(2001, `request target too long (max ${MAX_URL_LENGTH} characters)`, { status: 414 })
          : toApiError(error);
    void sendError(req, reply, apiError, opts.config.publicUrl);
  };
}

/**
 * Node's `clientError`: a request that never became one (malformed request line or header, a head
 * over 16 KiB, headers or body not arriving within REQUEST_TIMEOUT_S). There is no request object, so
 * the answer is written to the socket directly, then the connection is closed.
 */
export function clientErrorHandler(opts: Options & { log: FastifyBaseLogger }) {
  return (error: ConnectionError, socket: Socket): void => {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const apiError =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError(2001, `request not received in time (headers and body must arrive within ${opts.config.requestTimeoutS} s)`, { status: 408 })
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? new ApiError(2001, 'request line and headers too large (max 16 KiB)', { status: 431 })
          : ApiError.badRequest(`malformed HTTP request (${error.code})`);
    const id = randomUUID();
    const problem = toProblem(apiError, { instance: id, publicUrl: opts.config.publicUrl });
    const body = JSON.stringify(toErrorEnvelope(problem));
    const headers: Record<string, string> = {
      ...opts.headers('/api/'),
      'x-request-id': id,
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
    };
    opts.log.debug({ reqId: id, status: problem.status, code: error.code }, 'request refused before routing');
    if (socket.writable) {
      const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
      socket.write(`HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}\r\n${head.join('')}\r\n${body}`);
    }
    socket.destroy();
  };
}
