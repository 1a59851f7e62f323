// The request logger (src/requestLogger.ts): writes what pino's child would, and makes the child only when something is logged.
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { deferredChildLogger } from '../src/requestLogger.ts';

function capture(level: 'info' | 'trace' = 'info') {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(level, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const withoutTime = () => lines.map(({ time: _time, ...rest }) => rest);
  return { logger, lines, withoutTime };
}

describe('a request logger', () => {
  it("writes exactly what pino's child writes, for every way of calling it", () => {
    const deferred = capture();
    const direct = capture();
    const calls = (log: ReturnType<typeof deferredChildLogger>) => {
      log.info('plain message');
      log.warn('formatted %s and %d', 'text', 42);
      log.error({ detail: 'an object', password: 'not to be seen' }, 'with an object');
      log.info({ nested: { new_password: 'hidden too' } });
      log.debug('below the level: nothing');
      log.fatal(new Error('an error'), 'failed');
    };
    calls(deferredChildLogger(deferred.logger, { reqId: 'r-1' }, {}));
    calls(direct.logger.child({ reqId: 'r-1' }));
    const written = deferred.withoutTime().map(({ err: _err, ...rest }) => rest);
    expect(written).toEqual(direct.withoutTime().map(({ err: _err, ...rest }) => rest));
    expect(written).toHaveLength(5);
    expect(written.every((line) => line.reqId === 'r-1')).toBe(true);
    expect(JSON.stringify(deferred.lines)).not.toContain('not to be seen');
    expect(JSON.stringify(deferred.lines)).not.toContain('hidden too');
  });

  it('creates the pino child on the first line only, and never for a request that logs nothing', () => {
    const { logger } = capture();
    const child = vi.spyOn(logger, 'child');
    const quiet = deferredChildLogger(logger, { reqId: 'quiet' }, {});
    expect(quiet.level).toBe('info');
    expect(child).not.toHaveBeenCalled();

    const busy = deferredChildLogger(logger, { reqId: 'busy' }, {});
    busy.info('one');
    busy.info('two');
    expect(child).toHaveBeenCalledTimes(1);
  });

  it('makes no child for lines below its level (the access log of a service at LOG_LEVEL=warn), and writes those at it', () => {
    const { logger, lines } = capture();
    logger.level = 'warn';
    const child = vi.spyOn(logger, 'child');
    const log = deferredChildLogger(logger, { reqId: 'below' }, {});
    log.info('request completed');
    log.debug('details');
    expect(child).not.toHaveBeenCalled();
    log.warn('at the level');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.map((line) => [line.reqId, line.msg])).toEqual([['below', 'at the level']]);
  });

  it("has its parent's level, or the level Fastify asked for, until one is set on it", () => {
    const { logger, lines } = capture('trace');
    expect(deferredChildLogger(logger, { reqId: 'a' }, {}).level).toBe('trace');
    expect(deferredChildLogger(logger, { reqId: 'b' }, { level: 'warn' }).level).toBe('warn');
    const raised = deferredChildLogger(logger, { reqId: 'c' }, {});
    raised.level = 'error';
    raised.warn('hidden');
    raised.error('shown');
    expect(raised.level).toBe('error');
    expect(lines.map((line) => line.msg)).toEqual(['shown']);
    expect(logger.level).toBe('trace');
  });

  it('binds its request id into its own children', () => {
    const { logger, lines } = capture();
    deferredChildLogger(logger, { reqId: 'r-2' }, {}).child({ stream: 's-1' }).info('from a child');
    expect(lines[0]).toMatchObject({ reqId: 'r-2', stream: 's-1', msg: 'from a child' });
  });
});
