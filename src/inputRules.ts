// The rules every raw input meets before its schema sees it, on every transport: text PostgreSQL can store, no prototype keys.
import { TRPCError } from '@trpc/server';
import { z } from 'zod';

const MAX_ISSUES = 10;

/** Why PostgreSQL cannot store this text (CONTRACT §2.2), or undefined when it can. */
function unstorable(text: string): string | undefined {
  // A text column refuses U+0000 outright; the driver would turn a lone surrogate into U+FFFD on the way in.
  if (text.includes('\u0000')) return 'contains a NUL character (U+0000)';
  if (!text.isWellFormed()) return 'contains a lone surrogate (not valid Unicode text)';
  return undefined;
}

/** A value still to visit and where it sits; the path is built only for an offending value. */
type Node = { value: unknown; key: PropertyKey | undefined; parent: Node | undefined };

function pathOf(node: Node): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let n: Node | undefined = node; n?.key !== undefined; n = n.parent) path.unshift(n.key);
  return path;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/**
 * The problems of a raw input, in document order: every string and every object key that cannot be
 * stored, every `__proto__` key and every `constructor.prototype` (what secure-json-parse refuses: keys
 * that reach an object's prototype once copied by assignment). Iterative, so nesting depth costs no stack.
 */
export function inputProblems(input: unknown): z.core.$ZodIssue[] {
  const issues: z.core.$ZodIssue[] = [];
  const stack: Node[] = [{ value: input, key: undefined, parent: undefined }];
  const report = (node: Node, message: string, key?: string) =>
    issues.push({ code: 'custom', path: key === undefined ? pathOf(node) : [...pathOf(node), key], message });
  for (let node = stack.pop(); node !== undefined && issues.length < MAX_ISSUES; node = stack.pop()) {
    const { value } = node;
    if (typeof value === 'string') {
      const problem = unstorable(value);
      if (problem) report(node, `must be text that can be stored: it ${problem}`);
      continue;
    }
    if (!isObject(value)) continue;
    const children: Node[] = [];
    if (Array.isArray(value)) {
      value.forEach((item: unknown, index) => children.push({ value: item, key: index, parent: node }));
    } else {
      for (const [key, item] of Object.entries(value)) {
        const problem = unstorable(key);
        if (problem) {
          report(node, `has a key that cannot be stored: it ${problem}`);
          continue;
        }
        if (key === '__proto__') {
          report(node, 'is not an allowed key', key);
          continue;
        }
        if (key === 'constructor' && isObject(item) && Object.hasOwn(item, 'prototype')) {
          report({ value: item, key, parent: node }, 'is not an allowed key', 'prototype');
          continue;
        }
        children.push({ value: item, key, parent: node });
      }
    }
    // Reversed, so the stack visits them in document order.
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i];
      if (child) stack.push(child);
    }
  }
  return issues;
}

/**
 * Refuses an input with any of those problems as a schema failure does (BAD_REQUEST around a ZodError),
 * so each transport names the fields its usual way (`body.title`, `query.action_type`, `title`).
 */
export function assertAcceptableInput(input: unknown): void {
  const issues = inputProblems(input);
  // ZodRealError is the Error subclass zod's own parse throws; tRPC keeps a cause only if it is an Error.
  if (issues.length > 0) throw new TRPCError({ code: 'BAD_REQUEST', message: 'input cannot be stored', cause: new z.ZodRealError(issues) });
}
