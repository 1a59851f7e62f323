import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 8000, host: '127.0.0.1', publicUrl: 'http://127.0.0.1:8000', cookieSecure: true, accessTokenTtl: 3600, refreshTokenTtl: 604800, maxSessionsPerUser: 10, rateLimitsEnabled: true, rateLimitStore: 'memory', trustProxy: false, logLevel: 'info', dashboardEnabled: true });
    expect(c.corsOrigins).toEqual([]);
    expect(c.databaseUrl).toBeUndefined();
  });

  it('has the documented defaults for the database pool and timeouts (CONTRACT §6 rev. 2)', () => {
    expect(loadConfig({})).toMatchObject({ statementTimeoutMs: 5000, dbPoolMax: 20, dbAcquireTimeoutMs: 2000, requestTimeoutS: 30 });
    expect(loadConfig({ STATEMENT_TIMEOUT_MS: '250', DB_POOL_MAX: '5', DB_ACQUIRE_TIMEOUT_MS: '500', REQUEST_TIMEOUT_S: '10' })).toMatchObject({
      statementTimeoutMs: 250,
      dbPoolMax: 5,
      dbAcquireTimeoutMs: 500,
      requestTimeoutS: 10,
    });
    for (const [name, bad] of [['STATEMENT_TIMEOUT_MS', '0'], ['DB_POOL_MAX', '0'], ['DB_ACQUIRE_TIMEOUT_MS', 'soon'], ['REQUEST_TIMEOUT_S', '0']] as const) {
      expect(() => loadConfig({ [name]: bad }), name).toThrow(name);
    }
  });

  it('TEMP_PASSWORD_TTL_S: 259200 by default, 60..2592000 (CONTRACT §6 rev. 3)', () => {
    expect(loadConfig({}).tempPasswordTtlS).toBe(259_200);
    expect(loadConfig({ TEMP_PASSWORD_TTL_S: '60' }).tempPasswordTtlS).toBe(60);
    expect(loadConfig({ TEMP_PASSWORD_TTL_S: '2592000' }).tempPasswordTtlS).toBe(2_592_000);
    for (const bad of ['59', '2592001', '1.5', 'three days']) expect(() => loadConfig({ TEMP_PASSWORD_TTL_S: bad }), bad).toThrow(/TEMP_PASSWORD_TTL_S/);
  });

  it('uses the PostgreSQL limiter store when DATABASE_URL is set', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://x@h/db' }).rateLimitStore).toBe('postgres');
  });

  it('DASHBOARD_ENABLED turns the dashboard off and refuses what is not a boolean', () => {
    expect(loadConfig({ DASHBOARD_ENABLED: 'false' }).dashboardEnabled).toBe(false);
    expect(loadConfig({ DASHBOARD_ENABLED: '' }).dashboardEnabled).toBe(true);
    expect(() => loadConfig({ DASHBOARD_ENABLED: 'sometimes' })).toThrow(/DASHBOARD_ENABLED/);
  });

  it('names every bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', COOKIE_SECURE: 'maybe', RATE_LIMITS: '{nope' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'eighty', COOKIE_SECURE: 'maybe', RATE_LIMITS: '{nope', CORS_ORIGINS: '*' });
    } catch (error) {
      const message = String(error);
      for (const name of ['PORT', 'COOKIE_SECURE', 'RATE_LIMITS', 'CORS_ORIGINS']) expect(message).toContain(name);
    }
  });
});
