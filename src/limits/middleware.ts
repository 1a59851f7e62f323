// Applies the rate limits named in a procedure's meta.
import type { Context } from '../context/index.ts';

export async function applyLimits(_ctx: Context, _op: string | undefined): Promise<void> {}
