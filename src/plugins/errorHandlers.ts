// The error and not-found handlers: whatever fails below a route answers in our one error shape (CONTRACT §2.2).
import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import { ApiError, toApiError } from '../errors.ts';
import { sendError } from '../rest/reply.ts';

async function errorHandlers(app: FastifyInstance, opts: { config: Config }): Promise<void> {
  const { publicUrl } = opts.config;
  app.setErrorHandler((error: FastifyError | ApiError, req, reply) => sendError(req, reply, fastifyError(error), publicUrl));
  app.setNotFoundHandler((req, reply) =>
    sendError(req, reply, ApiError.routeNotFound(`no endpoint ${req.method} ${req.url.split('?')[0] ?? ''}`), publicUrl),
  );
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
