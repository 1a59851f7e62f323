// Tests run against one embedded PostgreSQL per run, migrated once into a template each test file clones.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'web/tests/**/*.test.ts'],
    globalSetup: ['tests/helpers/globalSetup.ts'],
    // Generous: 2 shared cores under a full shuffled run can stall a test that boots a service of its own.
    testTimeout: 60_000,
    // Browser tests poll the page until it shows what they expect; a busy 2-core CI machine needs more than 1 s.
    expect: { poll: { timeout: 20_000 } },
    hookTimeout: 90_000,
    pool: 'forks',
    maxWorkers: 2,
    // Every run orders the tests inside each file at random (the seed is printed; rerun one with
    // --sequence.seed=N), so a test that leans on another's leftovers fails here, not in a refactor.
    // Files keep vitest's longest-first scheduling: each has its own database, so their order shares nothing.
    sequence: { shuffle: { files: false, tests: true } },
  },
});
