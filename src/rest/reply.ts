// Writes success envelopes and error bodies; every error the HTTP layer sends goes through sendError.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { type ApiError, toErrorEnvelope, toProblem } from '../errors.ts';
import { prefersProblemJson } from './negotiate.ts';
import type { Pagination } from '../contracts/pagination.ts';

export function sendError(req: FastifyRequest, reply: FastifyReply, error: ApiError, publicUrl: string): FastifyReply {
  const problem = toProblem(error, { instance: req.id, publicUrl });
  reply.sentError = error;
  logServerError(req.log, error, 'request failed');
  if (problem.retry_after !== null) reply.header('retry-after', String(problem.retry_after));
  reply.code(problem.status);
  if (prefersProblemJson(req.headers.accept)) {
    // A Buffer, so Fastify keeps the media type exactly as RFC 9457 names it (no charset parameter).
    return reply.header('content-type', 'application/problem+json').send(Buffer.from(JSON.stringify(problem)));
  }
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(toErrorEnvelope(problem)));
}

/**
 * A 5xx is logged under the request's id (the client gets a generic sentence): the real failure at error
 * level with its stack. A 503 the service chose to send with nothing failed behind it (shutting down; a
 * readiness probe, which logs its own cause) is an expected answer during a stop or an outage: warn, no stack.
 */
export function logServerError(log: FastifyBaseLogger, error: ApiError, message: string, thrown: unknown = error): void {
  if (error.status < 500) return;
  if (error.status === 503 && error.cause === undefined) log.warn({ error_code: error.errorCode, detail: error.detail }, `${message}: unavailable`);
  else log.error({ err: error.cause ?? thrown, error_code: error.errorCode }, message);
}

export function envelope(data: unknown) {
  return { data, error: null, error_detail: null, success: true as const };
}

export function pageEnvelope(items: unknown[], pagination: Pagination) {
  return { data: items, error: null, error_detail: null, success: true as const, pagination };
}

declare module 'fastify' {
  interface FastifyReply {
    /** The error the reply was sent with (by sendError), for the metrics plugin's count of refusals. */
    sentError: ApiError | null;
  }
}
