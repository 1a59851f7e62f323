// The built dashboard (web/dist) held in memory: each file with its type, validator, and precompressed variants.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `npm run web:build` writes the dashboard. */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

export type Encoding = 'br' | 'gzip' | 'identity';

export type DashboardFile = {
  type: string;
  /** Weak: the brotli, gzip and identity bodies are one representation in different encodings (RFC 9110 §8.8.1). */
  etag: string;
  /** Fingerprinted by the build (`/assets/*`): its content never changes under this name. */
  immutable: boolean;
  bodies: Partial<Record<Encoding, Buffer>> & { identity: Buffer };
};

export type DashboardAssets = {
  /** By URL path, e.g. `/assets/index-3f9a.js`, `/favicon.svg`, `/index.html`. */
  files: ReadonlyMap<string, DashboardFile>;
  index: DashboardFile;
};

/** Reads a built dashboard from `dir`; null when there is none (not built, or built without index.html). */
export async function loadDashboard(dir: string = DASHBOARD_DIR): Promise<DashboardAssets | null> {
  const names = await fs.readdir(dir, { recursive: true }).catch(() => null);
  if (names === null) return null;
  const files = new Map<string, DashboardFile>();
  for (const name of names) {
    const type = TYPES[path.extname(name)];
    if (type === undefined) continue; // .br/.gz variants, and anything the dashboard does not serve
    const full = path.join(dir, name);
    const identity = await fs.readFile(full).catch(() => null);
    if (identity === null) continue; // a directory
    const urlPath = `/${name.split(path.sep).join('/')}`;
    files.set(urlPath, {
      type,
      etag: `W/"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`,
      immutable: urlPath.startsWith('/assets/'),
      bodies: {
        identity,
        ...(await variant(`${full}.br`, 'br')),
        ...(await variant(`${full}.gz`, 'gzip')),
      },
    });
  }
  const index = files.get('/index.html');
  return index ? { files, index } : null;
}

async function variant(file: string, encoding: 'br' | 'gzip'): Promise<Partial<Record<Encoding, Buffer>>> {
  const body = await fs.readFile(file).catch(() => null);
  return body ? { [encoding]: body } : {};
}

/**
 * The encoding to send for an `Accept-Encoding` header: brotli, then gzip, when the client accepts it
 * (`q` > 0, `*` counts) and the file has it; else identity.
 */
export function chooseEncoding(acceptEncoding: string | undefined, file: DashboardFile): Encoding {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [name = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (name === '') continue;
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    accepted.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const ok = (name: string) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0;
  if (file.bodies.br && ok('br')) return 'br';
  if (file.bodies.gzip && ok('gzip')) return 'gzip';
  return 'identity';
}
