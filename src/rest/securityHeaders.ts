// Security headers (CONTRACT §2.4) computed once by helmet and then set on every response as a constant.
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import helmet from 'helmet';

/**
 * helmet (the engine inside @fastify/helmet) is run once against a recording response. @fastify/helmet
 * would build the middleware again on every request, parsing the CSP directives each time, for headers
 * that never change; on a probe that was a visible share of the request
 * (docs/foundation.md#measured-reasons-behind-the-code).
 */
export function securityHeaders(opts: { hsts: boolean }): Readonly<Record<string, string>> {
  const middleware = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    strictTransportSecurity: opts.hsts ? { maxAge: 15_552_000 } : false,
  });
  // An unconnected request/response pair: helmet only sets and removes headers on the response.
  const req = new IncomingMessage(new Socket());
  const res = new ServerResponse(req);
  let finished = false;
  middleware(req, res, () => {
    finished = true;
  });
  if (!finished) throw new Error('helmet did not finish synchronously');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return Object.freeze(headers);
}
