// The process logger: pino JSON on stdout with credentials and passwords redacted (CONTRACT §2.4).
import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'password',
  '*.password',
  '*.current_password',
  '*.new_password',
  'body.password',
];

export function createLogger(level: Config['logLevel'], destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'agent-org' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
