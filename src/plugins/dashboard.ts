// The web dashboard at / (CONTRACT §4.9): fingerprinted assets cached for good, precompressed, its own CSP, app routes fall back to index.html.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../context/deps.ts';
import { chooseEncoding, type DashboardFile } from '../dashboard/assets.ts';

/**
 * Scripts, styles, images and API calls from this origin only; no inline script or style element, no
 * eval, nothing framed, no plugins. The dashboard needs nothing else (it talks to /api/trpc alone).
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; " +
  "manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

const IMMUTABLE = 'public, max-age=31536000, immutable';
// Unfingerprinted files (index.html, the icon) are revalidated on every use, so a new build shows at once.
const REVALIDATE = 'no-cache';

/** Paths that belong to the API, the docs and the metrics endpoint: never answered with the app, so their 404s stay theirs. */
const NOT_APP = /^\/(?:api|docs|metrics)(?:\/|$)/;

export default async function dashboard(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const assets = opts.deps.dashboard;
  if (!assets) return;

  const send = (req: FastifyRequest, reply: FastifyReply, file: DashboardFile) => {
    const encoding = chooseEncoding(req.headers['accept-encoding'], file);
    reply.headers({
      'content-security-policy': DASHBOARD_CSP,
      'cache-control': file.immutable ? IMMUTABLE : REVALIDATE,
      vary: 'accept-encoding',
      etag: file.etag,
    });
    if (matches(req.headers['if-none-match'], file.etag)) return reply.code(304).send();
    const body = file.bodies[encoding] ?? file.bodies.identity;
    if (encoding !== 'identity') reply.header('content-encoding', encoding);
    return reply.type(file.type).send(body);
  };

  const pathOf = (req: FastifyRequest) => req.url.split('?')[0] ?? '/';

  app.get('/assets/*', (req, reply) => {
    const file = assets.files.get(pathOf(req));
    return file ? send(req, reply, file) : reply.callNotFound();
  });

  // History-API routes (/approvals, /reviews/t-1, ...) get the app, which reads the path itself.
  const app404OrIndex = (req: FastifyRequest, reply: FastifyReply) => {
    const path = pathOf(req);
    if (NOT_APP.test(path)) return reply.callNotFound();
    const file = assets.files.get(path);
    if (file) return send(req, reply, file);
    // A name with an extension is a file that does not exist, not a page.
    if (/\.[^/]*$/.test(path)) return reply.callNotFound();
    return send(req, reply, assets.index);
  };
  app.get('/', app404OrIndex);
  app.get('/*', app404OrIndex);
}

/** `If-None-Match` uses the weak comparison (RFC 9110 §13.1.2): `*`, or any listed tag with the same opaque value. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}
