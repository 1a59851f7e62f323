// The output of procedures that answer nothing (REST 204, `undefined` over tRPC).
import { z } from 'zod';

/**
 * `z.undefined()`, not `z.void()`: tRPC's client types an output as its JSON serialization, where `void`
 * is not a value, so `z.void()` made logout, delete and revoke infer as `never` for the dashboard
 * (CONTRACT §4.7 rev. 2). `undefined` is assignable to `void` wherever a caller expects it.
 */
export const NoContent = z.undefined();

/** Turns a service's `Promise<void>` into the `undefined` that NoContent declares. */
export async function noContent(work: Promise<void>): Promise<undefined> {
  await work;
  return undefined;
}
