// Starts the run's embedded PostgreSQL and migrates the template database every test file clones.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { MikroORM } from '@mikro-orm/postgresql';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { migrateWithLock } from '../../src/db/database.ts';
import { migrateJobsSchema } from '../../src/jobs/queue.ts';
import { ormOptions } from '../../src/db/ormConfig.ts';
import { ensureDashboard } from '../../scripts/web.ts';

export const TEMPLATE_DB = 'agent_org_template';

declare module 'vitest' {
  export interface ProvidedContext {
    pgServerUrl: string;
  }
}

export default async function setup(project: TestProject) {
  // The browser tests and the serving tests need web/dist as the sources are now, not as last built.
  await ensureDashboard();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-org-test-'));
  // mkdtemp makes 0700; the embedded server may run as the `postgres` user and must reach its data dir.
  await fs.chmod(dir, 0o755);
  const quiet = { debug: () => {}, info: () => {}, warn: (m: string) => console.warn(m) };
  const server = await startEmbeddedPostgres(path.join(dir, 'pg'), quiet);
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  await admin.end();
  const templateUrl = withDatabase(server.url, TEMPLATE_DB);
  const orm = await MikroORM.init(ormOptions(templateUrl));
  await migrateWithLock(orm);
  await orm.close(true);
  // pg-boss's schema too, so a test file's service finds it installed instead of building it again.
  await migrateJobsSchema(templateUrl);
  project.provide('pgServerUrl', server.url);
  return async () => {
    await server.stop();
    await fs.rm(dir, { recursive: true, force: true });
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
