// The OpenAPI document's parts as types, and reading its nodes as plain JSON: what the other openapi/ modules share.
import type { OpenAPIObject } from 'trpc-to-openapi';

export type Json = Record<string, unknown>;
export type Components = NonNullable<OpenAPIObject['components']>;
export type Parameter = NonNullable<Components['parameters']>[string];
export type Response = NonNullable<Components['responses']>[string];
export type Header = NonNullable<Components['headers']>[string];
export type Operation = NonNullable<NonNullable<OpenAPIObject['paths']>[string]['get']>;

export const SCHEMA_REF = '#/components/schemas/';

export const ref = (kind: 'schemas' | 'responses' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** A node as an object (a copy of its own entries), or `{}` when it is anything else. */
export function record(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {};
}

export function pascal(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
