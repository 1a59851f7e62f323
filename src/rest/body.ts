// Request bodies of the REST facade: kept as received, parsed only when a procedure reads its input.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';

/**
 * A non-empty body as it arrived. Parsing waits until the procedure asks for its input, which its tier
 * does after authentication and the role check (CONTRACT §2.2): an anonymous malformed body is 401, a
 * wrong role's 403, and a procedure that ignores its input (logout) never fails on one.
 */
export class ReceivedBody {
  readonly #bytes: Buffer | undefined;
  readonly #contentType: string;

  private constructor(bytes: Buffer | undefined, contentType: string) {
    this.#bytes = bytes;
    this.#contentType = contentType;
  }

  static json(bytes: Buffer): ReceivedBody {
    return new ReceivedBody(bytes, 'application/json');
  }

  static unsupported(contentType: string): ReceivedBody {
    return new ReceivedBody(undefined, contentType);
  }

  /** The parsed JSON value; 400/2001 for another media type, bytes that are not UTF-8, or malformed JSON. */
  parse(): unknown {
    if (this.#bytes === undefined) throw ApiError.badRequest(`body: unsupported content type ${this.#contentType}; send application/json`);
    let text: string;
    try {
      // Fatal, so invalid UTF-8 is refused instead of silently becoming U+FFFD (CONTRACT §2.2).
      text = new TextDecoder('utf-8', { fatal: true }).decode(this.#bytes);
    } catch {
      throw ApiError.badRequest('body: not valid UTF-8');
    }
    try {
      return JSON.parse(text);
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
 * app's): JSON bodies are kept as bytes and other media types remembered, both for later. The size limit
 * stays the server's `bodyLimit`, enforced while reading.
 */
export function deferredBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    // Whitespace alone is no input, like an empty body.
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    done(null, bytes.toString('utf8').trim() === '' ? undefined : ReceivedBody.json(bytes));
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
    if (body.length === 0) return done(null, undefined);
    done(null, ReceivedBody.unsupported(String(req.headers['content-type'] ?? '(none)')));
  });
}
