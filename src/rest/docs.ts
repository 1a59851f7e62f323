// The reference UI at /docs (Scalar, served locally) and the error-type page at /docs/errors.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Deps } from '../context/deps.ts';
import { ERROR_CATEGORIES, ERROR_CODES } from '../errors.ts';

// The UI runs inline scripts and styles; the relaxed policy is confined to /docs.
const DOCS_CSP =
  "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The routes Scalar's plugin serves with `routePrefix: '/docs'` and a `url` source (`/docs/` too: trailing slashes are ignored). */
const SCALAR_ROUTES = ['/docs', '/docs/js/scalar.js'];

export async function docsRoutes(app: FastifyInstance, _opts: { deps: Deps }): Promise<void> {
  app.addHook('onSend', async (req, reply, payload) => {
    if (req.url === '/docs' || req.url.startsWith('/docs/') || req.url.startsWith('/docs?')) reply.header('content-security-policy', DOCS_CSP);
    return payload;
  });
  // Scalar's plugin module inlines its 4 MB UI bundle and an OpenAPI parser: ~40 MB of resident memory
  // and a noticeable share of boot time (bench/RESULTS.md) for a page few clients ever open. It is
  // loaded on the first /docs request instead, into a small Fastify instance of its own that these
  // routes forward to, and closed with the app.
  let reference: Promise<FastifyInstance> | undefined;
  const loadReference = async (): Promise<FastifyInstance> => {
    const { default: scalar } = await import('@scalar/fastify-api-reference');
    const ui = Fastify({ logger: false });
    await ui.register(scalar, {
      routePrefix: '/docs',
      configuration: { url: '/api/v1/openapi.json', title: 'agent-org API', withDefaultFonts: false },
      logLevel: 'silent',
    });
    await ui.ready();
    return ui;
  };
  const forward = async (req: FastifyRequest, reply: FastifyReply) => {
    reference ??= loadReference().catch((error: unknown) => {
      reference = undefined;
      throw error;
    });
    // Scalar answers /docs with a redirect to /docs/ (its page loads `js/scalar.js` relatively); /docs is
    // served directly instead, with that one path made absolute, so clients that do not follow
    // redirects get the page too.
    const atRoot = req.url === '/docs' || req.url.startsWith('/docs?');
    const res = await (await reference).inject({ method: 'GET', url: atRoot ? '/docs/' : req.url });
    for (const name of ['content-type', 'location']) {
      const value = res.headers[name];
      if (typeof value === 'string') reply.header(name, value);
    }
    const body = atRoot ? Buffer.from(res.body.replace('src="js/scalar.js"', 'src="/docs/js/scalar.js"')) : res.rawPayload;
    return reply.code(res.statusCode).send(body);
  };
  for (const url of SCALAR_ROUTES) app.get(url, forward);
  app.addHook('onClose', async () => {
    if (reference) await (await reference.catch(() => undefined))?.close();
  });

  const page = renderErrorPage();
  app.get('/docs/errors', async (_req, reply) => reply.type('text/html; charset=utf-8').send(page));
}

/** The error page, written from the code table in errors.ts: one section per category, one row per code. */
function renderErrorPage(): string {
  const escape = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  // `code` spans in the table's sentences become <code> (after escaping, so nothing else can).
  const prose = (s: string) => escape(s).replace(/`([^`]+)`/g, '<code>$1</code>');
  const codes = Object.entries(ERROR_CODES);
  const sections = Object.entries(ERROR_CATEGORIES)
    .map(([category, title]) => {
      const rows = codes
        .filter(([, info]) => info.category === category)
        .map(([code, info]) => {
          const statuses = 'alsoStatus' in info ? `${info.status}, ${info.alsoStatus}` : String(info.status);
          return `<tr id="${code}"><td>${code}</td><td>${info.name}</td><td>${statuses}</td><td>${info.retryable ? 'yes' : 'no'}</td><td>${prose(info.when)}</td></tr>`;
        });
      return `
<section id="${category}">
  <h2><a href="#${category}">${escape(title)}</a> <code>${category}</code></h2>
  <table><thead><tr><th>code</th><th>name</th><th>HTTP status</th><th>retryable</th><th>when</th></tr></thead><tbody>
  ${rows.join('\n  ')}
  </tbody></table>
</section>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agent-org error types</title>
<style>body{font-family:system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}</style>
</head><body>
<h1>Error types</h1>
<p>Every error carries <code>type</code> = this page with the category as anchor, <code>error_code</code>, <code>retryable</code> and
<code>retry_after</code>. Retry only when <code>retryable</code> is true: wait <code>retry_after</code> seconds if set, else back off
exponentially from 1 s, at most 3 attempts; log <code>instance</code> on final failure.</p>
${sections}
</body></html>`;
}
