// Tests run against one embedded PostgreSQL per run, migrated once into a template each test file clones.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'web/tests/**/*.test.ts'],
    globalSetup: ['tests/helpers/globalSetup.ts'],
    testTimeout: 30_000,
    // Browser tests poll the page until it shows what they expect; a busy 2-core CI machine needs more than 1 s.
    expect: { poll: { timeout: 20_000 } },
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
