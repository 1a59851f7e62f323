// The reference UI at /docs (Scalar, served locally) and the error-type page at /docs/errors.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Deps } from '../context/deps.ts';
import { ERROR_CATEGORIES, ERROR_CODES } from '../errors.ts';

// The UI runs inline scripts and styles; the relaxed policy is confined to /docs.
const DOCS_CSP =
  "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const SCRIPT_PATH = '/docs/js/scalar.js';

/**
 * Scalar's configuration. Its hosted extras stay off: "Ask AI" (the agent) uploads the document to Scalar's
 * servers, and with MCP generation and the developer toolbar (Share, Deploy) it is switched on by default
 * whenever the page is served from localhost, which is where this service listens by default. Telemetry
 * off, no web fonts; the API client ("try it") stays, sending requests to this server only (the CSP above).
 */
export const SCALAR_CONFIGURATION = {
  url: '/api/v1/openapi.json',
  title: 'agent-org API',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
} as const;

/** The UI script, in each encoding we serve, with the tag of its content. */
type Script = { tag: string; identity: Buffer; gzip: Buffer; br: Buffer };
type Reference = { page: string; script: Script };

export async function docsRoutes(app: FastifyInstance, _opts: { deps: Deps }): Promise<void> {
  app.addHook('onSend', async (req, reply, payload) => {
    if (req.url === '/docs' || req.url.startsWith('/docs/') || req.url.startsWith('/docs?')) reply.header('content-security-policy', DOCS_CSP);
    return payload;
  });
  // Scalar's plugin module inlines its whole UI bundle and an OpenAPI parser: resident memory and boot
  // time (docs/foundation.md#measured-reasons-behind-the-code) for a page few clients ever open.
  // It is loaded on the first /docs request, asked once for its page and script, which are kept (the
  // script compressed once, gzip and brotli), and closed again.
  let reference: Promise<Reference> | undefined;
  const load = (): Promise<Reference> =>
    (reference ??= loadReference().catch((error: unknown) => {
      reference = undefined;
      throw error;
    }));

  // `/docs/` too: trailing slashes are ignored.
  app.get('/docs', async (_req, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send((await load()).page));
  app.get(SCRIPT_PATH, async (req, reply) => sendScript(req, reply, (await load()).script));

  const page = renderErrorPage();
  app.get('/docs/errors', async (_req, reply) => reply.type('text/html; charset=utf-8').send(page));
}

async function loadReference(): Promise<Reference> {
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const ui = Fastify({ logger: false });
  try {
    await ui.register(scalar, { routePrefix: '/docs', configuration: SCALAR_CONFIGURATION, logLevel: 'silent' });
    await ui.ready();
    const html = await ui.inject({ method: 'GET', url: '/docs/' });
    const js = await ui.inject({ method: 'GET', url: SCRIPT_PATH });
    if (html.statusCode !== 200 || js.statusCode !== 200) throw new Error(`the reference UI did not render (${html.statusCode}, ${js.statusCode})`);
    const script = await compressed(js.rawPayload);
    // Scalar's page loads `js/scalar.js` relatively (it redirects /docs to /docs/ for that); ours names the
    // script by its content, so the page works at /docs and /docs/ alike and the script can be cached for good.
    const page = html.body.replace('src="js/scalar.js"', `src="${SCRIPT_PATH}?v=${script.tag}"`);
    if (page === html.body) throw new Error('the reference UI page no longer loads js/scalar.js');
    return { page, script };
  } finally {
    await ui.close();
  }
}

async function compressed(identity: Buffer): Promise<Script> {
  const [gzip, br] = await Promise.all([
    promisify(zlib.gzip)(identity, { level: 9 }),
    // Quality 5: nearly as small as the top qualities, which take many times longer
    // (docs/foundation.md#measured-reasons-behind-the-code).
    promisify(zlib.brotliCompress)(identity, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: identity.length },
    }),
  ]);
  return { tag: createHash('sha256').update(identity).digest('base64url').slice(0, 16), identity, gzip, br };
}

/**
 * The script in the best encoding the client accepts. The page asks for it by content (`?v=<tag>`), so that
 * URL is cached for a year; any other URL must revalidate, answered 304 while the tag still matches.
 */
function sendScript(req: FastifyRequest, reply: FastifyReply, script: Script): FastifyReply {
  const encoding = preferredEncoding(req.headers['accept-encoding']);
  const etag = `"${script.tag}${encoding === 'identity' ? '' : `-${encoding}`}"`;
  const versioned = new URL(req.url, 'http://x').searchParams.get('v') === script.tag;
  reply
    .header('vary', 'accept-encoding')
    .header('etag', etag)
    .header('cache-control', versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=0, must-revalidate')
    .type('application/javascript; charset=utf-8');
  if (req.headers['if-none-match']?.split(',').some((t) => t.trim() === etag || t.trim() === '*')) return reply.code(304).send();
  if (encoding !== 'identity') reply.header('content-encoding', encoding);
  return reply.send(script[encoding]);
}

/** `br` over `gzip` over no encoding, among those the `Accept-Encoding` header does not refuse (RFC 9110 §12.5.3). */
function preferredEncoding(header: string | undefined): 'br' | 'gzip' | 'identity' {
  const accepted = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    accepted.set(name.trim(), q === undefined ? 1 : Number(q.slice(2)) || 0);
  }
  const weight = (coding: string) => accepted.get(coding) ?? accepted.get('*') ?? 0;
  if (weight('br') > 0) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return 'identity';
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
