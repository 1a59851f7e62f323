// The request limiter: every bucket of CONTRACT §5 (global, per-operation window, in-flight slot) on one store.
import { GlobalLimiter, globalStoreOptions } from './globalLimiter.ts';
import { InflightGuard, inflightStoreOptions } from './inflightGuard.ts';
import { OperationId, type GlobalBucket, type OperationPolicy, type ResolvedPolicy } from './policy.ts';
import { SlidingWindowLimiter, slidingWindowStoreOptions, type LimitDecision } from './slidingWindow.ts';
import { createLimiterStores, type LimiterStoreConfig } from './stores.ts';

/** Who a bucket counts: a signed-in user, or a client IP for anonymous calls and IP-keyed operations. */
export type Subject = { readonly kind: 'user' | 'ip'; readonly id: string };

export function subjectKey(subject: Subject): string {
  return `${subject.kind}:${subject.id}`;
}

export interface OperationLimits {
  readonly id: OperationId;
  readonly policy: OperationPolicy;
  readonly window: SlidingWindowLimiter;
  /** Present for the operations with a concurrency cap (5002). */
  readonly inflight: InflightGuard | null;
}

export interface RequestLimiterOptions {
  readonly store: LimiterStoreConfig;
  readonly policy: ResolvedPolicy;
  /** Milliseconds since the epoch; the service passes its clock so windows are testable. */
  readonly now: () => number;
}

/**
 * Every bucket is built once at boot, so a request costs only store round trips. Key prefixes carry the
 * bucket's name and window, so changing a limit's window through RATE_LIMITS never reads counts written
 * under another window length by an instance that still runs the old configuration.
 */
export class RequestLimiter {
  readonly storeKind: LimiterStoreConfig['kind'];
  readonly policy: ResolvedPolicy;
  readonly #global: Readonly<Record<GlobalBucket, GlobalLimiter>>;
  readonly #operations: ReadonlyMap<OperationId, OperationLimits>;

  constructor(options: RequestLimiterOptions) {
    const { policy, now } = options;
    const stores = createLimiterStores(options.store);
    this.storeKind = stores.kind;
    this.policy = policy;

    const globalLimiter = (bucket: GlobalBucket) => {
      const window = policy.global[bucket];
      return new GlobalLimiter({ store: stores.create({ keyPrefix: `${bucket}:${window.window_s}`, ...globalStoreOptions(window) }) });
    };
    this.#global = Object.freeze({
      'global.authenticated': globalLimiter('global.authenticated'),
      'global.anonymous': globalLimiter('global.anonymous'),
    });

    const operations = new Map<OperationId, OperationLimits>();
    for (const id of OperationId.options) {
      const op = policy.operations[id];
      const window = new SlidingWindowLimiter({
        store: stores.create({ keyPrefix: `op:${id}:${op.window_s}`, ...slidingWindowStoreOptions(op.window_s) }),
        limit: op.limit,
        windowSeconds: op.window_s,
        now,
      });
      const inflight = op.concurrency
        ? new InflightGuard({ store: stores.create({ keyPrefix: `inflight:${id}`, ...inflightStoreOptions(op.timeout_ms) }) })
        : null;
      operations.set(id, Object.freeze({ id, policy: op, window, inflight }));
    }
    this.#operations = operations;
  }

  /** Counts one call against the subject's global bucket (authenticated users and anonymous IPs differ). */
  global(subject: Subject): Promise<LimitDecision> {
    const bucket: GlobalBucket = subject.kind === 'user' ? 'global.authenticated' : 'global.anonymous';
    return this.#global[bucket].consume(subjectKey(subject));
  }

  operation(id: OperationId): OperationLimits {
    const limits = this.#operations.get(id);
    // OperationId is a closed enum and every id was built above; reaching this is a programming error.
    if (!limits) throw new Error(`no limits for operation ${id}`);
    return limits;
  }
}
