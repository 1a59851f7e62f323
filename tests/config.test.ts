import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 8000, host: '127.0.0.1', publicUrl: 'http://127.0.0.1:8000', cookieSecure: true, accessTokenTtl: 3600, refreshTokenTtl: 604800, maxSessionsPerUser: 10, rateLimitsEnabled: true, rateLimitStore: 'memory', trustProxy: false, logLevel: 'info', dashboardEnabled: true });
    expect(c.corsOrigins).toEqual([]);
    expect(c.databaseUrl).toBeUndefined();
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
