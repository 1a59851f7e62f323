import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.ts';
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { startTestService, type TestService } from './helpers/service.ts';

const quiet = { debug: () => {}, info: () => {}, warn: () => {} };

// This file owns its database server: stopping the run's shared server would break every other file.
let dir: string;
let dataDir: string;
let port: number;
let server: EmbeddedDatabase | undefined;
let svc: TestService;
let doc: OpenApiDocument;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-readyz-'));
  await fs.chmod(dir, 0o755);
  dataDir = path.join(dir, 'pg');
  server = await startEmbeddedPostgres(dataDir, quiet);
  port = Number(new URL(server.url).port);
  // startTestService migrates the database, like a booting instance would.
  svc = await startTestService({ databaseUrl: server.url });
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
}, 60_000);

afterAll(async () => {
  await svc.close();
  await server?.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

const readyz = (accept = 'application/json') => svc.app.inject({ method: 'GET', url: '/api/v1/readyz', headers: { accept } });

async function waitFor(status: number, deadlineMs: number) {
  const started = Date.now();
  for (;;) {
    const res = await readyz();
    if (res.statusCode === status) return { res, elapsed: Date.now() - started };
    if (Date.now() - started > deadlineMs) throw new Error(`readyz still answers ${res.statusCode} after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Each test starts from the database state it needs, whatever the previous test left. */
async function databaseUp(): Promise<void> {
  if (server) return;
  server = await startEmbeddedPostgres(dataDir, quiet, { port });
  await waitFor(200, 10_000);
}

async function databaseDown(): Promise<void> {
  await server?.stop();
  server = undefined;
}

describe('GET /api/v1/readyz follows the database without a restart', () => {
  it('answers 200 while the database is up', async () => {
    await databaseUp();
    const res = await readyz();
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'ok', persistence: true });
  });

  it('answers 503/8001 "persistence unavailable" within 3 s of the database stopping', async () => {
    await databaseUp();
    await databaseDown();
    const started = Date.now();
    const res = await readyz();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(res.statusCode).toBe(503);
    expect(res.json().error_detail).toMatchObject({ error_code: 8001, error_category: 'internal', detail: 'persistence unavailable', retryable: true });
    expect(res.headers['retry-after']).toBe(String(res.json().error_detail.retry_after));
    expectResponseConforms(doc, 'GET', '/api/v1/readyz', res);

    const problem = await readyz('application/problem+json');
    expect(problem.statusCode).toBe(503);
    expect(problem.json()).toMatchObject({ status: 503, error_code: 8001, detail: 'persistence unavailable' });
    expectResponseConforms(doc, 'GET', '/api/v1/readyz', problem);
  });

  it('keeps answering healthz 200 meanwhile (liveness needs no database)', async () => {
    await databaseDown();
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/healthz' });
    expect(res.statusCode).toBe(200);
  });

  it('recovers to 200 by itself when the database comes back', async () => {
    await databaseDown();
    expect((await readyz()).statusCode).toBe(503);
    server = await startEmbeddedPostgres(dataDir, quiet, { port });
    const { res } = await waitFor(200, 10_000);
    expect(res.json().data).toMatchObject({ status: 'ok', persistence: true });
  });
});
