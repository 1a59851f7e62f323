// The API's zod schemas, loaded once the first page is on screen: zod and the schemas are a large part of
// the bundle (docs/dashboard.md), and no first paint needs them.
import type { z } from 'zod';
import type * as Schemas from './schemas.ts';
import { check, type Checked } from '../lib/forms.ts';

export type ApiSchemas = typeof Schemas;

let loading: Promise<ApiSchemas> | null = null;

export function apiSchemas(): Promise<ApiSchemas> {
  // zodConfig is a module of its own (not `import('zod')`): a dynamic import of zod itself would keep all of it.
  return (loading ??= Promise.all([import('./zodConfig.ts'), import('./schemas.ts')]).then(([, schemas]) => schemas));
}

/** Loads the schemas just after the first page is drawn, so the first submission does not wait for them. */
export function preloadApiSchemas(): void {
  window.setTimeout(() => void apiSchemas(), 100);
}

/** `check` with the schema `pick` chooses from the API's schemas. */
export async function validate<S extends z.ZodType>(pick: (schemas: ApiSchemas) => S, input: unknown): Promise<Checked<z.output<S>>> {
  return check(pick(await apiSchemas()), input);
}
