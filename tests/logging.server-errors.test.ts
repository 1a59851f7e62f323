// 5xx answers are logged under the request's id: real failures at error level with their stack, a chosen 503 as a warning.
import { describe, expect, it } from 'vitest';
import { ApiError, toApiError } from '../src/errors.ts';
import { createLogger } from '../src/logger.ts';
import { logServerError } from '../src/rest/reply.ts';

function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('trace', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

describe('logServerError', () => {
  it('logs a failure (a 5xx with a cause) at error level with the cause and its stack', () => {
    const { log, lines } = recordingLogger();
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    logServerError(log, ApiError.unavailable(undefined, { cause, retryAfter: 1 }), 'request failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'request failed', error_code: 8001, err: { message: cause.message, stack: expect.stringContaining('Error: connect ECONNREFUSED') } });
  });

  it('logs an unexpected throw (500/8000) at error level with what was thrown', () => {
    const { log, lines } = recordingLogger();
    const thrown = new TypeError('cannot read properties of undefined');
    logServerError(log, toApiError(thrown), 'request failed', thrown);
    expect(lines[0]).toMatchObject({ level: 50, error_code: 8000, err: { type: 'TypeError', message: thrown.message } });
  });

  it('logs a 503 the service chose to send (shutting down, not ready) as a warning, without a stack', () => {
    const { log, lines } = recordingLogger();
    logServerError(log, ApiError.unavailable('the service is shutting down', { retryAfter: 1 }), 'request failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, msg: 'request failed: unavailable', error_code: 8001, detail: 'the service is shutting down' });
    expect(lines[0]).not.toHaveProperty('err');
  });

  it('logs nothing for a client error', () => {
    const { log, lines } = recordingLogger();
    logServerError(log, ApiError.conflict('first-run setup has already been done'), 'request failed');
    expect(lines).toEqual([]);
  });
});
