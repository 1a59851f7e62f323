// Fastify's childLoggerFactory: each request's logger, bound to its request id only once something is logged.
import type { FastifyBaseLogger } from 'fastify';
import { levels, type Bindings, type ChildLoggerOptions } from 'pino';

/**
 * pino's child() serializes its bindings at once, and with wildcard redaction (`*.password`) runs every
 * binding through the redactor: work and garbage on every request, for a logger a probe never writes to
 * (its access line is at debug level; docs/foundation.md#measured-reasons-behind-the-code). This one
 * creates the pino child on first use; what gets written is exactly what the child would have written.
 */
class DeferredChildLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #logger(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options));
  }

  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.#write('error', args);
  }

  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }

  info(...args: unknown[]): void {
    this.#write('info', args);
  }

  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }

  // Arguments are passed on as they came: pino formats `(msg, ...args)` and `(obj, msg, ...args)` differently.
  #write(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    // pino would drop a line below the level (the access log's, with LOG_LEVEL=warn): no child is made for it.
    if (this.#child === undefined && (levels.values[level] ?? 0) < (levels.values[this.level] ?? 0)) return;
    const logger = this.#logger();
    Reflect.apply(logger[level], logger, args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }
}

export function deferredChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new DeferredChildLogger(logger, bindings, options);
}
