// The service's Prometheus metrics (CONTRACT §4.10): one registry per service, the instruments others update.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Pool } from 'pg';

/**
 * What the rest of the service updates. Request counting is the metrics plugin's own onResponse hook;
 * the others are called where the thing happens:
 * - `rateLimited(code, operation)` through countSentError below, where errors become responses;
 * - `loginFailures` by the metrics plugin when auth.login answers 401;
 * - `eventStreams` (`inc()` when an event stream opens, `dec()` when it closes), `eventsDelivered` and
 *   `eventsDropped` (`inc()` or `inc(n)`) for the events subsystem;
 * - `purgedRows` (`inc({ task }, n)`) by housekeeping;
 * - `webhookAttempts` (`inc({ result })`) for each delivery attempt, `webhookDeliveries` (`inc({ outcome })`) when a
 *   delivery ends, both by the webhook delivery job.
 */
export type Metrics = {
  readonly registry: Registry;
  readonly requests: Counter<'operation' | 'method' | 'status'>;
  readonly requestDuration: Histogram<'operation' | 'method' | 'status'>;
  rateLimited(code: 5000 | 5001 | 5002, operation: string): void;
  readonly loginFailures: Counter;
  readonly eventStreams: Gauge;
  readonly eventsDelivered: Counter;
  readonly eventsDropped: Counter;
  readonly purgedRows: Counter<'task'>;
  /** Webhook delivery attempts, by `result`: `success` (a 2xx) or the failure's kind (`timeout`, `http_error`, …). */
  readonly webhookAttempts: Counter<'result'>;
  /** Webhook deliveries that ended, by `outcome`: `succeeded` or `failed`. */
  readonly webhookDeliveries: Counter<'outcome'>;
  /** Reads the number of webhook deliveries still pending (queued or waiting for a retry) at every scrape. */
  watchWebhookQueue(depth: () => Promise<number>): void;
  /** Reads the pool's size, idle and waiting counts at every scrape (nothing is sampled in between). */
  watchPool(pool: Pick<Pool, 'totalCount' | 'idleCount' | 'waitingCount'>): void;
};

// Request latencies here run from a millisecond (probes) to seconds (password hashing under load).
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(): Metrics {
  const registry = new Registry();
  const rateLimitRefusals = new Counter({
    name: 'agent_org_rate_limited_total',
    help: 'Requests refused by a rate limit, by error code (5000 global, 5001 per operation, 5002 concurrency) and operation',
    labelNames: ['code', 'operation'] as const,
    registers: [registry],
  });
  let pool: Pick<Pool, 'totalCount' | 'idleCount' | 'waitingCount'> | null = null;
  const poolGauge = (name: string, help: string, read: (p: NonNullable<typeof pool>) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        if (pool) this.set(read(pool));
      },
    });
  poolGauge('agent_org_db_pool_size', 'Open connections in the database pool', (p) => p.totalCount);
  poolGauge('agent_org_db_pool_idle', 'Idle connections in the database pool', (p) => p.idleCount);
  poolGauge('agent_org_db_pool_waiting', 'Requests waiting for a database connection', (p) => p.waitingCount);
  let webhookQueue: (() => Promise<number>) | null = null;
  new Gauge({
    name: 'agent_org_webhook_deliveries_pending',
    help: 'Webhook deliveries pending (queued, or waiting for their next attempt), on every instance together',
    registers: [registry],
    async collect() {
      if (webhookQueue) this.set(await webhookQueue());
    },
  });

  return {
    registry,
    requests: new Counter({
      name: 'agent_org_http_requests_total',
      help: 'HTTP requests answered, by operation (procedure path, or route), method and status',
      labelNames: ['operation', 'method', 'status'] as const,
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'agent_org_http_request_duration_seconds',
      help: 'Time from receiving a request to sending its response, by operation, method and status',
      labelNames: ['operation', 'method', 'status'] as const,
      buckets: DURATION_BUCKETS,
      registers: [registry],
    }),
    rateLimited: (code, operation) => rateLimitRefusals.inc({ code, operation }),
    loginFailures: new Counter({
      name: 'agent_org_login_failures_total',
      help: 'Sign-in attempts refused for a wrong username or password',
      registers: [registry],
    }),
    eventStreams: new Gauge({ name: 'agent_org_event_streams_open', help: 'Event streams currently open', registers: [registry] }),
    eventsDelivered: new Counter({ name: 'agent_org_events_delivered_total', help: 'Events written to a client stream', registers: [registry] }),
    eventsDropped: new Counter({
      name: 'agent_org_events_dropped_total',
      help: 'Events not delivered to a stream (slow consumer, closed stream)',
      registers: [registry],
    }),
    purgedRows: new Counter({
      name: 'agent_org_housekeeping_purged_rows_total',
      help: 'Rows deleted by housekeeping, by purge task',
      labelNames: ['task'] as const,
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'agent_org_webhook_attempts_total',
      help: 'Webhook delivery attempts made by this instance, by result (success, or the kind of failure)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'agent_org_webhook_deliveries_total',
      help: 'Webhook deliveries that ended on this instance, by outcome (succeeded, failed)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    watchPool(p) {
      pool = p;
    },
    watchWebhookQueue(depth) {
      webhookQueue = depth;
    },
  };
}

/**
 * Counts an error as it is sent when it is a rate-limit refusal (CONTRACT §4.10: every 429, by code and
 * operation). Called where an error becomes a response — the HTTP layer's sendError (through the metrics
 * plugin's hook) and tRPC's error formatter — not where one is raised, so no source of 429s (limiter, login
 * throttle, in-flight idempotency keys, stream caps, those still to come) can forget it, and a refusal
 * rethrown on its way out is counted once.
 */
export function countSentError(metrics: Metrics, error: { readonly errorCode: number }, operation: string): void {
  const code = error.errorCode;
  if (code === 5000 || code === 5001 || code === 5002) metrics.rateLimited(code, operation);
}

// Process-wide facts (CPU, memory, event loop lag, GC), collected once per process however many services
// it runs (tests start dozens): each collection installs an event-loop monitor and a GC observer.
let processRegistry: Registry | undefined;

/** The service's registry merged with the process defaults, for serving. */
export function servedRegistry(metrics: Metrics): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return Registry.merge([metrics.registry, processRegistry]);
}
