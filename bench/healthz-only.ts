// `node bench/healthz-only.ts`: just the healthz-versus-plain-Fastify comparison, for quick iterations.
import { benchHealthz } from './healthz.ts';

const result = await benchHealthz({ durationS: Number(process.env.BENCH_DURATION ?? 5), rounds: 1 });
console.log(JSON.stringify(result, null, 2));
