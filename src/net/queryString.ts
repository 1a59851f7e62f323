// The query string as every route reads it: percent-decoded strictly, so text that is not UTF-8 is kept apart, never replaced (CONTRACT §2.2).

/**
 * A query value (or the value of a key) whose percent-encoding or UTF-8 is invalid: `%FF`, `%E2%82`, a
 * bare `%`, or `%ED%A0%80`, the UTF-8 form of a lone surrogate. It stays a value of its own kind so the
 * transport that reads the parameter refuses it by name once the caller is authorized; decoding it
 * leniently would hand the service other text than was sent (U+FFFD, or the raw `%FF`).
 */
export class UndecodableText {
  readonly raw: string;

  constructor(raw: string) {
    this.raw = raw;
  }
}

/** How a refusal of such a value reads, after the parameter's name. */
export const UNDECODABLE = 'invalid percent-encoding or UTF-8 in the URL';

export type QueryValue = string | UndecodableText;
export type Query = Record<string, QueryValue | QueryValue[]>;

/**
 * Fastify's `querystringParser`: `a=1&b=x+y&a=2` → `{ a: ['1', '2'], b: 'x y' }` as fast-querystring
 * parses it, but a key or value that cannot be decoded becomes an UndecodableText (under its raw key when
 * the key is the part that cannot be decoded). Keys are defined, never assigned, so `__proto__` is an
 * ordinary key.
 */
export function parseQueryString(text: string): Query {
  const query = new Map<string, QueryValue | QueryValue[]>();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const rawKey = equals === -1 ? pair : pair.slice(0, equals);
    const key = decode(rawKey);
    const value = key instanceof UndecodableText ? key : decode(equals === -1 ? '' : pair.slice(equals + 1));
    const name = key instanceof UndecodableText ? rawKey : key;
    const earlier = query.get(name);
    if (earlier === undefined) query.set(name, value);
    else if (Array.isArray(earlier)) earlier.push(value);
    else query.set(name, [earlier, value]);
  }
  return Object.fromEntries(query);
}

function decode(raw: string): QueryValue {
  // `+` is a space in a form-encoded query (what URLSearchParams and fast-querystring read too).
  const text = raw.includes('+') ? raw.replaceAll('+', ' ') : raw;
  if (!text.includes('%')) return text;
  try {
    // decodeURIComponent is strict: it throws on a malformed escape and on bytes that are not UTF-8,
    // surrogate code points included, so whatever it returns is well-formed text.
    return decodeURIComponent(text);
  } catch {
    return new UndecodableText(raw);
  }
}

/** The first of `names` whose value in `query` could not be decoded, if any. */
export function undecodableParameter(query: unknown, names: readonly string[]): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  for (const name of names) {
    const value: unknown = Object.hasOwn(query, name) ? Reflect.get(query, name) : undefined;
    if (value instanceof UndecodableText || (Array.isArray(value) && value.some((item) => item instanceof UndecodableText))) return name;
  }
  return undefined;
}
