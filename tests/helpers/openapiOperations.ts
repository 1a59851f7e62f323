// The operations an OpenAPI document describes, read into typed records for tests that sweep all of them.
import { z } from 'zod';
import type { OpenApiDocument } from './openapiConformance.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const Parameter = z.object({ $ref: z.string().optional(), name: z.string().optional(), in: z.string().optional(), schema: z.record(z.string(), z.unknown()).optional() });

const Operation = z.object({
  operationId: z.string(),
  description: z.string().optional(),
  security: z.array(z.record(z.string(), z.array(z.string()))),
  parameters: z.array(Parameter).optional(),
  requestBody: z.object({ required: z.boolean(), content: z.record(z.string(), z.object({ schema: z.object({ $ref: z.string() }) })) }).optional(),
  responses: z.record(z.string(), z.record(z.string(), z.unknown())),
});

export type DocumentedOperation = z.infer<typeof Operation> & {
  method: Method;
  /** The path template relative to /api/v1, e.g. `/users/{user_id}`. */
  path: string;
  /** Documented statuses, as numbers. */
  statuses: number[];
  /** Names of the parameters it refers to in components.parameters (`IfMatch`, `IdempotencyKey`, …). */
  sharedParameters: string[];
  /** Whether a signed-in user is required (a non-empty security requirement). */
  authenticated: boolean;
  /** Whether a cookie-authenticated call must send X-CSRF-Token. */
  csrf: boolean;
};

export function operationsOf(doc: OpenApiDocument): DocumentedOperation[] {
  const operations: DocumentedOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      if (!(method in item)) continue;
      const operation = Operation.parse(item[method]);
      operations.push({
        ...operation,
        method: upper(method),
        path,
        statuses: Object.keys(operation.responses).map(Number),
        sharedParameters: (operation.parameters ?? []).flatMap((p) => (p.$ref === undefined ? [] : [p.$ref.split('/').at(-1) ?? ''])),
        authenticated: operation.security.length > 0,
        csrf: operation.security.some((requirement) => 'csrfToken' in requirement),
      });
    }
  }
  return operations;
}

/** The operation's URL under /api/v1 with its path parameters filled (`agent_index` 0, others from `values` or `x`). */
export function urlOf(operation: DocumentedOperation, values: Record<string, string> = {}): string {
  return `/api/v1${operation.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? (name === 'agent_index' ? '0' : 'x')))}`;
}

function upper(method: (typeof METHODS)[number]): Method {
  switch (method) {
    case 'get':
      return 'GET';
    case 'post':
      return 'POST';
    case 'put':
      return 'PUT';
    case 'patch':
      return 'PATCH';
    case 'delete':
      return 'DELETE';
  }
}
