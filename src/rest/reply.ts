// Writes success envelopes and error bodies; every error the HTTP layer sends goes through sendError.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ApiError, toErrorEnvelope, toProblem } from '../errors.ts';
import type { Pagination } from '../services/pagination.ts';
import { prefersProblemJson } from './negotiate.ts';

export function sendError(req: FastifyRequest, reply: FastifyReply, error: ApiError, publicUrl: string): FastifyReply {
  const problem = toProblem(error, { instance: req.id, publicUrl });
  if (problem.status >= 500) {
    // The client gets a generic sentence; the real failure is logged under the same id.
    req.log.error({ err: error.cause ?? error, error_code: problem.error_code }, 'request failed');
  }
  if (problem.retry_after !== null) reply.header('retry-after', String(problem.retry_after));
  reply.code(problem.status);
  if (prefersProblemJson(req.headers.accept)) {
    // A Buffer, so Fastify keeps the media type exactly as RFC 9457 names it (no charset parameter).
    return reply.header('content-type', 'application/problem+json').send(Buffer.from(JSON.stringify(problem)));
  }
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(toErrorEnvelope(problem)));
}

export function envelope(data: unknown) {
  return { data, error: null, error_detail: null, success: true as const };
}

export function pageEnvelope(items: unknown[], pagination: Pagination) {
  return { data: items, error: null, error_detail: null, success: true as const, pagination };
}
