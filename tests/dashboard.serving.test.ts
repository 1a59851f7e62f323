// The dashboard as the service serves it (CONTRACT §4.9): assets, caching, compression, CSP, history fallback, the switch.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseEncoding, loadDashboard, type DashboardFile } from '../src/dashboard/assets.ts';
import { DASHBOARD_CSP } from '../src/plugins/dashboard.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser } from './helpers/users.ts';

let svc: TestService;
let script: string;
let stylesheet: string;
beforeAll(async () => {
  svc = await startTestService();
  const html = (await svc.app.inject({ method: 'GET', url: '/' })).body;
  script = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)"><\/script>/.exec(html)?.[1] ?? '';
  stylesheet = /<link rel="stylesheet" crossorigin href="(\/assets\/[^"]+\.css)">/.exec(html)?.[1] ?? '';
});
afterAll(() => svc.close());

const get = (url: string, headers: Record<string, string> = {}) => svc.app.inject({ method: 'GET', url, headers });

describe('GET / (the app)', () => {
  it('serves index.html with its own strict CSP, revalidated on every use', async () => {
    const res = await get('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('the CSP allows no inline script, no eval and no other origin', () => {
    const directives = new Map(DASHBOARD_CSP.split(';').map((d) => d.trim().split(/\s+/)).map(([name = '', ...values]) => [name, values]));
    expect(directives.get('default-src')).toEqual(["'none'"]);
    for (const name of ['script-src', 'style-src', 'connect-src', 'img-src']) expect(directives.get(name)).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
  });

  it('index.html loads only fingerprinted same-origin files and has no inline script', async () => {
    const html = (await get('/')).body;
    expect(script).toMatch(/^\/assets\/index-[A-Za-z0-9_-]+\.js$/);
    expect(stylesheet).toMatch(/^\/assets\/index-[A-Za-z0-9_-]+\.css$/);
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/ src="\/assets\//);
    expect(html).not.toMatch(/<script\b[^>]*>[^<]+<\/script>/);
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('history-API routes get the app, so a reload of /approvals or /reviews/t-1 works', async () => {
    for (const url of ['/approvals', '/reviews/task-1', '/setup?step=company', '/users/']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toContain('<div id="app"></div>');
    }
  });

  it('API and docs paths keep their own 404 in the error model, never the app', async () => {
    for (const url of ['/api/v1/nope', '/api', '/api/trpc', '/docs/nope']) {
      const res = await get(url, { accept: 'application/problem+json' });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toBe('application/problem+json');
      expect(res.json(), url).toMatchObject({ status: 404, error_code: 3002 });
    }
  });

  it('a missing file is a 404, not the app', async () => {
    for (const url of ['/assets/index-missing.js', '/robots.txt', '/nope.png']) expect((await get(url)).statusCode, url).toBe(404);
  });

  it('other methods on app routes are not answered with the app', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/approvals', payload: {} });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('<div id="app">');
  });

  it('HEAD works like GET', async () => {
    const res = await svc.app.inject({ method: 'HEAD', url: '/approvals' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  });
});

describe('GET /assets/* (fingerprinted)', () => {
  it('is cached for a year as immutable', async () => {
    for (const url of [script, stylesheet]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('public, max-age=31536000, immutable');
      expect(res.headers.vary, url).toBe('accept-encoding');
    }
    expect((await get(script)).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await get(stylesheet)).headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('is sent brotli-compressed when accepted, else gzip, else as is: the same bytes each way', async () => {
    const plain = await get(script, { 'accept-encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    const br = await get(script, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.rawPayload).equals(plain.rawPayload)).toBe(true);
    const gz = await get(script, { 'accept-encoding': 'gzip, br;q=0' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);
    expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2);
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await get(script);
    const again = await get(script, { 'if-none-match': String(first.headers.etag) });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });
});

describe('capabilities.dashboard and DASHBOARD_ENABLED', () => {
  it('capabilities.dashboard is true while the dashboard is served', async () => {
    const user = await createUser(svc);
    expect(await user.caller.probes.capabilities()).toMatchObject({ dashboard: true });
  });

  it('DASHBOARD_ENABLED=false serves nothing at / and reports dashboard false', async () => {
    const off = await startTestService({ env: { DASHBOARD_ENABLED: 'false' } });
    try {
      const res = await off.app.inject({ method: 'GET', url: '/', headers: { accept: 'application/problem+json' } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error_code: 3002 });
      expect((await off.app.inject({ method: 'GET', url: script })).statusCode).toBe(404);
      const user = await createUser(off);
      expect(await user.caller.probes.capabilities()).toMatchObject({ dashboard: false });
    } finally {
      await off.close();
    }
  });

  it('without a build there is no dashboard to serve (the service then reports dashboard false)', async () => {
    const empty = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-no-dashboard-'));
    try {
      expect(await loadDashboard(empty)).toBeNull();
      expect(await loadDashboard(path.join(empty, 'missing'))).toBeNull();
    } finally {
      await fs.rm(empty, { recursive: true, force: true });
    }
  });
});

describe('chooseEncoding', () => {
  const file: DashboardFile = { type: 'text/javascript', etag: 'W/"x"', immutable: true, bodies: { identity: Buffer.from('a'), br: Buffer.from('b'), gzip: Buffer.from('g') } };

  it('prefers brotli, then gzip, honouring q=0 and *', () => {
    expect(chooseEncoding('gzip, br', file)).toBe('br');
    expect(chooseEncoding('gzip', file)).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip;q=0.5', file)).toBe('gzip');
    expect(chooseEncoding('*', file)).toBe('br');
    expect(chooseEncoding('*;q=0', file)).toBe('identity');
    expect(chooseEncoding(undefined, file)).toBe('identity');
    expect(chooseEncoding('BR', file)).toBe('br');
  });

  it('never picks a variant the build did not produce', () => {
    expect(chooseEncoding('br, gzip', { ...file, bodies: { identity: Buffer.from('a') } })).toBe('identity');
  });
});
