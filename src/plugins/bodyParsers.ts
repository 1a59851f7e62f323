// The body parsers: JSON only (an empty body means "no input"); any other media type is 400/2001.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../errors.ts';

export const BODY_LIMIT = 1024 * 1024;

async function bodyParsers(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(ApiError.badRequest('body: malformed JSON'), undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (req, body, done) => {
    if (body.length === 0) return done(null, undefined);
    done(ApiError.badRequest(`body: unsupported content type ${String(req.headers['content-type'] ?? '(none)')}; send application/json`), undefined);
  });
}

export default fp(bodyParsers, { name: 'body-parsers' });
