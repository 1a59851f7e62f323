// Request bodies of the REST facade: kept as received, parsed only when a procedure reads its input.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';

/**
 * A non-empty body as it arrived. Parsing waits until the procedure asks for its input, which its tier
 * does after authentication and the role check (CONTRACT §2.2): an anonymous malformed body is 401, a
 * wrong role's 403, and a procedure that ignores its input (logout) never fails on one.
 */
export class ReceivedBody {
  readonly #text: string | undefined;
  readonly #contentType: string;

  private constructor(text: string | undefined, contentType: string) {
    this.#text = text;
    this.#contentType = contentType;
  }

  static json(text: string): ReceivedBody {
    return new ReceivedBody(text, 'application/json');
  }

  static unsupported(contentType: string): ReceivedBody {
    return new ReceivedBody(undefined, contentType);
  }

  /** The parsed JSON value; 400/2001 for malformed JSON or another media type. */
  parse(): unknown {
    if (this.#text === undefined) throw ApiError.badRequest(`body: unsupported content type ${this.#contentType}; send application/json`);
    try {
      return JSON.parse(this.#text);
    } catch {
      throw ApiError.badRequest('body: malformed JSON');
    }
  }
}

/** What the request sent as its body: undefined when there was none (an empty body is no input). */
export function bodyOf(raw: unknown): unknown {
  return raw instanceof ReceivedBody ? raw.parse() : raw;
}

/**
 * The facade's parsers (registered in its own plugin scope, so /api/trpc and unknown paths keep the
 * app's): JSON bodies are kept as text and other media types remembered, both for later. The size limit
 * stays the server's `bodyLimit`, enforced while reading.
 */
export function deferredBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    done(null, text.trim() === '' ? undefined : ReceivedBody.json(text));
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
    if (body.length === 0) return done(null, undefined);
    done(null, ReceivedBody.unsupported(String(req.headers['content-type'] ?? '(none)')));
  });
}
