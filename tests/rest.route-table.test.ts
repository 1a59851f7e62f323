// The REST route table (src/rest/routeTable.ts): one entry per procedure with openapi meta, naming the procedure it serves.
import { getInputOutputParsers } from 'trpc-to-openapi';
import { describe, expect, it } from 'vitest';
import { appRouter, restRouter } from '../src/routers/index.ts';
import { routeTable } from '../src/rest/routeTable.ts';

describe('the route table', () => {
  it('has one route per procedure with openapi meta, and each carries the very procedure the router serves at its path', () => {
    const procedures = new Map<string, unknown>(Object.entries(restRouter._def.procedures));
    const rest = [...procedures].filter(([, procedure]) => hasOpenApiMeta(procedure)).map(([path]) => path);
    expect(routeTable.map((r) => r.procedurePath).sort()).toEqual(rest.sort());
    for (const route of routeTable) expect(route.procedure, route.procedurePath).toBe(procedures.get(route.procedurePath));
  });

  it('serves the application router, plus the REST-only procedures, which tRPC does not carry (CONTRACT §4.7)', () => {
    const rest = new Set(routeTable.map((r) => r.procedurePath));
    const trpc = Object.entries(appRouter._def.procedures).filter(([, procedure]) => hasOpenApiMeta(procedure)).map(([path]) => path);
    for (const path of trpc) expect(rest.has(path), path).toBe(true);
    expect([...rest].filter((path) => !(path in appRouter._def.procedures))).toEqual(['audit.export']);
  });

  it('gives every METHOD + path to exactly one procedure', () => {
    const keys = routeTable.map((r) => `${r.method} ${r.openapiPath}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('the unlimited tier (src/trpc.ts)', () => {
  // It carries no middleware, so nothing would apply the input rules (NUL, lone surrogates, __proto__).
  it('serves only procedures that take no input', () => {
    const unlimited = routeTable.filter((route) => route.meta.access?.tier === 'unlimited');
    expect(unlimited.map((route) => route.procedurePath).sort()).toEqual(['probes.healthz', 'probes.readyz', 'setup.status']);
    for (const route of unlimited) expect(getInputOutputParsers(route.procedure).hasInputsDefined, route.procedurePath).toBe(false);
  });
});

function hasOpenApiMeta(procedure: unknown): boolean {
  if (typeof procedure !== 'function' || !('_def' in procedure)) return false;
  const def: unknown = procedure._def;
  if (typeof def !== 'object' || def === null || !('meta' in def)) return false;
  const meta: unknown = def.meta;
  return typeof meta === 'object' && meta !== null && 'openapi' in meta;
}
