// The environment, parsed once by zod into a typed, frozen configuration (CONTRACT §6).
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { ROLES, type Role } from './contracts/roles.ts';

const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? fallback : v === 'true' || v === '1' || v === 'yes'));

const int = (fallback: number, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .optional()
    .transform((v) => (v === undefined ? fallback : Number(v)))
    .pipe(z.number().int().min(min, `must be >= ${min}`).max(max, `must be <= ${max}`));

const url = z.url({ error: 'must be a URL' });

const EnvSchema = z.object({
  PORT: int(8000, 0, 65535),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_URL: url.optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  APP_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  COOKIE_SECURE: bool(true),
  ACCESS_TOKEN_TTL: int(3600, 60, 86_400),
  REFRESH_TOKEN_TTL: int(604_800, 300, 2_592_000),
  MAX_SESSIONS_PER_USER: int(10, 1, 1000),
  RATE_LIMITS_ENABLED: bool(true),
  RATE_LIMIT_STORE: z.enum(['auto', 'memory', 'postgres']).default('auto'),
  RATE_LIMITS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return {};
      try {
        const parsed: unknown = JSON.parse(v);
        return parsed;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
        return z.NEVER;
      }
    }),
  TRUST_PROXY: z
    .string()
    .optional()
    .transform((v, ctx): TrustProxy => {
      const value = (v ?? 'false').trim();
      if (['false', 'no', '0'].includes(value)) return false;
      if (['true', 'yes'].includes(value)) {
        ctx.addIssue({
          code: 'custom',
          message:
            'true is refused: it would believe the leftmost X-Forwarded-For entry, which any client can write. ' +
            'Give the number of proxies in front of the service (e.g. 1) or their addresses/CIDRs (e.g. 10.0.0.5,10.1.0.0/16)',
        });
        return z.NEVER;
      }
      if (/^\d+$/.test(value)) return { hops: Number(value) };
      const entries = value.split(',').map((s) => s.trim());
      const bad = entries.filter((entry) => !isTrustedProxyEntry(entry));
      if (bad.length > 0) {
        ctx.addIssue({ code: 'custom', message: `must be false, a number of proxy hops, or a comma-separated list of IP addresses/CIDRs (not ${bad.join(', ')})` });
        return z.NEVER;
      }
      return { addresses: Object.freeze(entries) };
    }),
  CORS_ORIGINS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    )
    .pipe(z.array(z.url({ error: 'each origin must be a URL such as https://app.example.com' }))),
  PROVIDERS_FILE: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  STATEMENT_TIMEOUT_MS: int(5000, 100, 600_000),
  DB_POOL_MAX: int(20, 1, 1000),
  DB_ACQUIRE_TIMEOUT_MS: int(2000, 100, 60_000),
  REQUEST_TIMEOUT_S: int(30, 1, 3600),
  DASHBOARD_ENABLED: bool(true),
  EVENT_RETENTION_S: int(86_400, 60, 2_592_000),
  EVENTS_MAX_STREAMS_PER_USER: int(10, 1, 1000),
  METRICS_ENABLED: bool(true),
  // Compared with what a scraper sends in `Authorization: Bearer …`, so it must be a header-safe token.
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{16,256}$/, 'must be 16..256 printable ASCII characters without spaces')
    .optional(),
  PURGE_INTERVAL_S: int(3600, 10, 86_400),
  TEMP_PASSWORD_TTL_S: int(259_200, 60, 2_592_000),
  MFA_REQUIRED_ROLES: z
    .string()
    .optional()
    .transform((v) => [
      ...new Set(
        (v ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s.length > 0),
      ),
    ])
    .pipe(z.array(z.enum(ROLES, { error: `each role must be one of ${ROLES.join(', ')}` }))),
  AUDIT_RETENTION_DAYS: int(365, 1, 36_500),
  WEBHOOK_ALLOW_PRIVATE: bool(false),
  WEBHOOK_TIMEOUT_S: int(10, 1, 60),
  WEBHOOK_MAX_ATTEMPTS: int(8, 1, 20),
  WEBHOOK_RETRY_BASE_S: int(5, 1, 3600),
  WEBHOOK_DISABLE_AFTER: int(20, 1, 1000),
});

/**
 * Which peers may report the client address in X-Forwarded-For (CONTRACT §5). The client is the rightmost
 * address not trusted: `hops` trusts that many proxies in front of the service (the socket peer
 * included), `addresses` trusts exactly the listed proxies.
 */
export type TrustProxy = false | { hops: number } | { addresses: readonly string[] };

// proxy-addr's names for the loopback, link-local and private ranges are accepted as well.
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isTrustedProxyEntry(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

export type Config = Readonly<{
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  appSecret: string | undefined;
  cookieSecure: boolean;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  maxSessionsPerUser: number;
  rateLimitsEnabled: boolean;
  rateLimitStore: 'memory' | 'postgres';
  rateLimitOverrides: unknown;
  trustProxy: TrustProxy;
  corsOrigins: readonly string[];
  providersFile: string | undefined;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  /** Server-side limit of one SQL statement; beyond it the request gets 503/8001 (CONTRACT §2.2). */
  statementTimeoutMs: number;
  dbPoolMax: number;
  /** How long a request waits for a pooled connection before 503/8001. */
  dbAcquireTimeoutMs: number;
  /** Headers and body must arrive within this many seconds, else 408 (CONTRACT §2.4). */
  requestTimeoutS: number;
  /** Serve the web dashboard at / (CONTRACT §4.9). */
  dashboardEnabled: boolean;
  eventRetentionS: number;
  eventsMaxStreamsPerUser: number;
  /** Serve GET /metrics (CONTRACT §4.10). */
  metricsEnabled: boolean;
  /** When set, GET /metrics requires `Authorization: Bearer <metricsToken>`. */
  metricsToken: string | undefined;
  /** Seconds between housekeeping purges of expired rows. */
  purgeIntervalS: number;
  /** How long a password set by the CEO or an operator (must_change_password) signs in (CONTRACT §3.7). */
  tempPasswordTtlS: number;
  /** Roles whose people must turn two-factor authentication on before doing anything else (CONTRACT §3.6); none by default. */
  mfaRequiredRoles: readonly Role[];
  /** Days an audit entry is kept before housekeeping deletes it (CONTRACT §4.13), independent of the events' retention. */
  auditRetentionDays: number;
  /** Webhooks may point at loopback, private, link-local, CGNAT and unspecified addresses (CONTRACT §4.12): development and tests only. */
  webhookAllowPrivate: boolean;
  /** An attempt without a 2xx within this many seconds has failed with `timeout`. */
  webhookTimeoutS: number;
  /** Attempts before a delivery is `failed` (the first included). */
  webhookMaxAttempts: number;
  /** The unit of the retry schedule: retries come this many seconds × 1, 6, 24, 120, 720, 2160, 4320 after a failed attempt. */
  webhookRetryBaseS: number;
  /** Consecutive failed deliveries that turn a webhook off. */
  webhookDisableAfter: number;
}>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses an environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings count as unset, the way shells and .env files usually mean them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const store = e.RATE_LIMIT_STORE === 'auto' ? (e.DATABASE_URL ? 'postgres' : 'memory') : e.RATE_LIMIT_STORE;
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    publicUrl: (e.PUBLIC_URL ?? `http://${e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST}:${e.PORT}`).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.DATA_DIR),
    appSecret: e.APP_SECRET,
    cookieSecure: e.COOKIE_SECURE,
    accessTokenTtl: e.ACCESS_TOKEN_TTL,
    refreshTokenTtl: e.REFRESH_TOKEN_TTL,
    maxSessionsPerUser: e.MAX_SESSIONS_PER_USER,
    rateLimitsEnabled: e.RATE_LIMITS_ENABLED,
    rateLimitStore: store,
    rateLimitOverrides: e.RATE_LIMITS,
    trustProxy: e.TRUST_PROXY,
    corsOrigins: Object.freeze([...e.CORS_ORIGINS]),
    providersFile: e.PROVIDERS_FILE,
    logLevel: e.LOG_LEVEL,
    statementTimeoutMs: e.STATEMENT_TIMEOUT_MS,
    dbPoolMax: e.DB_POOL_MAX,
    dbAcquireTimeoutMs: e.DB_ACQUIRE_TIMEOUT_MS,
    requestTimeoutS: e.REQUEST_TIMEOUT_S,
    dashboardEnabled: e.DASHBOARD_ENABLED,
    eventRetentionS: e.EVENT_RETENTION_S,
    eventsMaxStreamsPerUser: e.EVENTS_MAX_STREAMS_PER_USER,
    metricsEnabled: e.METRICS_ENABLED,
    metricsToken: e.METRICS_TOKEN,
    purgeIntervalS: e.PURGE_INTERVAL_S,
    tempPasswordTtlS: e.TEMP_PASSWORD_TTL_S,
    mfaRequiredRoles: Object.freeze([...e.MFA_REQUIRED_ROLES]),
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
    webhookTimeoutS: e.WEBHOOK_TIMEOUT_S,
    webhookMaxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
    webhookRetryBaseS: e.WEBHOOK_RETRY_BASE_S,
    webhookDisableAfter: e.WEBHOOK_DISABLE_AFTER,
  });
}
