// CONTRACT §1 (rev. 2): the served document works unmodified with openapi-typescript + openapi-fetch, checked by tsc --strict and a live run.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { startTestService, type TestService } from './helpers/service.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const WALK = path.join(root, 'tests', 'openapi-client', 'walk.ts');

// What the program's tsconfig asks of it: strict, and nothing that would not run under Node's type stripping.
const COMPILER_OPTIONS = {
  strict: true,
  noEmit: true,
  target: 'es2024',
  lib: ['es2024', 'dom'],
  module: 'nodenext',
  moduleResolution: 'nodenext',
  types: ['node'],
  allowImportingTsExtensions: true,
  verbatimModuleSyntax: true,
  erasableSyntaxOnly: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: true,
};

let svc: TestService;
let baseUrl: string;
let dir: string;
let generated: string;
beforeAll(async () => {
  svc = await startTestService();
  const address = await svc.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `${address}/api/v1`;
  dir = await mkdtemp(path.join(tmpdir(), 'agent-org-openapi-client-'));
  // The types, from the document as a third party fetches it.
  generated = astToString(await openapiTS(new URL(`${baseUrl}/openapi.json`)));
});
afterAll(async () => {
  await svc.close();
  await rm(dir, { recursive: true, force: true });
});

/** A directory holding `program` as walk.ts beside the generated api.ts, set up as a TypeScript project of its own. */
async function clientProject(name: string, program: string): Promise<string> {
  const project = path.join(dir, name);
  await mkdir(project);
  // It resolves openapi-fetch and @types/node from its own node_modules, as a separate project would.
  await symlink(path.join(root, 'node_modules'), path.join(project, 'node_modules'), 'dir');
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  await writeFile(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: COMPILER_OPTIONS, files: ['walk.ts'] }));
  await writeFile(path.join(project, 'api.ts'), generated);
  await writeFile(path.join(project, 'walk.ts'), program);
  return project;
}

/** `tsc -p` on the program's directory, through the compiler API: the formatted diagnostics, empty when it type-checks. */
function typeCheck(project: string): string {
  const host: ts.ParseConfigFileHost = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => void d };
  const config = ts.getParsedCommandLineOfConfigFile(path.join(project, 'tsconfig.json'), undefined, host);
  if (!config) throw new Error('the tsconfig of the client program could not be read');
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  const diagnostics = [...config.errors, ...ts.getPreEmitDiagnostics(program)];
  return ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => project, getNewLine: () => '\n' });
}

const Exchanges = z.array(
  z.object({ method: z.string(), url: z.string(), status: z.int(), headers: z.record(z.string(), z.union([z.string(), z.array(z.string())])), body: z.string() }),
);

describe('a client generated from the served document (openapi-typescript + openapi-fetch)', () => {
  it('type-checks under tsc --strict and walks setup, login, users, the wizard, approvals, reviews and logout against a live server', { timeout: 90_000 }, async () => {
    const project = await clientProject('walk', await readFile(WALK, 'utf8'));
    expect(typeCheck(project)).toBe('');

    const recordFile = path.join(project, 'exchanges.json');
    const { stdout } = await promisify(execFile)(process.execPath, ['walk.ts'], {
      cwd: project,
      env: { ...process.env, AGENT_ORG_API: baseUrl, RECORD_FILE: recordFile, NODE_NO_WARNINGS: '1' },
      timeout: 60_000,
    });
    expect(stdout).toMatch(/^walked \d+ requests/);

    // Every answer the walk got is what the document promises for it, headers included.
    const doc: OpenApiDocument = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const exchanges = Exchanges.parse(JSON.parse(await readFile(recordFile, 'utf8')));
    expect(exchanges.length).toBeGreaterThan(30);
    for (const exchange of exchanges) expectResponseConforms(doc, exchange.method, exchange.url, { statusCode: exchange.status, ...exchange });
  });

  it('a program that misuses the generated types does not type-check', async () => {
    // A role the enum does not have, a null limit (the query parameter is plain optional), a required field left out.
    const program = [
      "import createClient from 'openapi-fetch';",
      "import type { paths } from './api.ts';",
      "const api = createClient<paths>({ baseUrl: 'http://127.0.0.1' });",
      "await api.POST('/users', { body: { username: 'a', password: 'long enough password', role: 'admin' } });",
      "await api.GET('/users', { params: { query: { limit: null } } });",
      "await api.POST('/auth/login', { body: { username: 'a' } });",
    ].join('\n');
    const diagnostics = typeCheck(await clientProject('broken', program));
    for (const line of [4, 5, 6]) expect(diagnostics).toContain(`walk.ts(${String(line)},`);
  });
});
