// The instance's one LISTEN connection: a dedicated pg client (not a pool connection), reconnected with backoff.
import pg from 'pg';

export const NOTIFY_CHANNEL = 'agent_org_events';

export type ListenerOptions = {
  connectionString: string;
  /**
   * A notification arrived: a publication committed. `publishedThrough` is the highest id it published, or
   * null when the payload names none (a release before notifications carried it, a hand-sent NOTIFY).
   */
  onNotify(publishedThrough: number | null): void;
  /** LISTEN is in place again after a (re)connect: anything committed meanwhile must be read now. */
  onListening(): void;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** First and largest delay between reconnection attempts (ms). */
  backoff?: { initialMs: number; maxMs: number };
  /** How often the idle connection is checked with a round trip, so a silently dead one is noticed (ms). */
  probeIntervalMs?: number;
};

export class NotificationListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  /** Resolves start() once the first connection listens. */
  private started: (() => void) | null = null;
  private readonly opts: ListenerOptions;

  constructor(opts: ListenerOptions) {
    this.opts = opts;
  }

  /** Connects and listens; resolves once listening (retrying with backoff until then). */
  async start(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.started = resolve;
      this.connect();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.probeTimer) clearInterval(this.probeTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  /** LISTEN is in place (false while connecting or reconnecting). */
  get listening(): boolean {
    return this.client !== null;
  }

  /** The listening connection's server process id (for operators and for tests that cut it). */
  get backendPid(): number | null {
    return this.client && 'processID' in this.client && typeof this.client.processID === 'number' ? this.client.processID : null;
  }

  private connect(): void {
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.opts.connectionString,
      application_name: 'agent-org-events',
      connectionTimeoutMillis: 5000,
      query_timeout: 5000,
      keepAlive: true,
    });
    let failed = false;
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      if (this.client === client) this.client = null;
      if (this.probeTimer) clearInterval(this.probeTimer);
      this.probeTimer = null;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      if (this.stopped) return;
      const { initialMs, maxMs } = this.opts.backoff ?? { initialMs: 100, maxMs: 5000 };
      // Jittered (50–100 % of the delay), so instances that lost the database together do not return in lockstep.
      const delay = Math.round(Math.min(maxMs, initialMs * 2 ** this.attempt) * (0.5 + Math.random() / 2));
      this.attempt++;
      this.opts.log.warn({ err: error, retry_in_ms: delay }, 'event listener lost its database connection');
      this.retryTimer = setTimeout(() => this.connect(), delay);
    };
    client.on('error', fail);
    client.on('end', () => fail(new Error('connection ended')));
    client.on('notification', (message) => this.opts.onNotify(publishedIdOf(message.payload)));
    client
      .connect()
      .then(() => client.query(`LISTEN ${NOTIFY_CHANNEL}`))
      .then(() => {
        if (failed) return;
        if (this.stopped) {
          void client.end().catch(() => undefined);
          return;
        }
        if (this.attempt > 0) this.opts.log.info({}, 'event listener reconnected');
        this.attempt = 0;
        this.client = client;
        this.probeTimer = setInterval(() => {
          client.query('SELECT 1').catch(fail);
        }, this.opts.probeIntervalMs ?? 10_000);
        this.probeTimer.unref();
        this.started?.();
        this.started = null;
        this.opts.onListening();
      })
      .catch(fail);
  }
}

/** The id events_publish() sends as its payload; null for anything else. */
export function publishedIdOf(payload: string | undefined): number | null {
  if (payload === undefined || !/^[1-9][0-9]{0,15}$/.test(payload)) return null;
  const id = Number(payload);
  return Number.isSafeInteger(id) ? id : null;
}
