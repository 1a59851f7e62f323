// Dependencies point one way (CONTRACT §1 rev. 3): transports → routers → services → stores → db, and the
// wire vocabulary (src/contracts) imports nothing of ours. `npm run deps:check` (run by .ci/run) enforces it.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No module takes part in an import cycle (type-only imports count: they tie modules as tightly for a reader).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'Every import names a module that exists (tsc lets an unresolved side-effect import through; it would fail only at load).',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'contracts-are-a-leaf',
      severity: 'error',
      comment: 'The wire vocabulary imports only zod, Node built-ins and itself, so every layer and the browser can use it.',
      from: { path: '^src/contracts/' },
      to: { pathNot: ['^src/contracts/', '^node_modules/zod/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'data-only-on-contracts',
      severity: 'error',
      comment: 'The shipped catalogues (templates, presets, locales, providers) are data on the vocabulary, nothing more.',
      from: { path: '^src/data/' },
      to: { path: '^src/', pathNot: ['^src/data/', '^src/contracts/'] },
    },
    {
      name: 'services-are-transport-free',
      severity: 'error',
      comment: 'Business rules never reach up into routers, the tRPC setup, the request context, transports or Fastify.',
      from: { path: '^src/services/' },
      to: {
        path: [
          '^src/routers/',
          '^src/trpc\\.ts$',
          '^src/context/',
          '^src/rest/',
          '^src/plugins/',
          '^src/app\\.ts$',
          '^src/service\\.ts$',
          '^src/events/(socket|stream|plugin|subscription)\\.ts$',
          '^node_modules/(fastify|@fastify|@trpc)/',
        ],
      },
    },
    {
      name: 'stores-only-query',
      severity: 'error',
      comment: "A store is its area's only query module: it builds on db/ and the vocabulary, never on a service.",
      from: { path: '^src/services/[^/]+/store\\.ts$' },
      to: { path: '^src/services/', pathNot: '^src/services/[^/]+/store\\.ts$' },
    },
    {
      name: 'db-is-the-bottom',
      severity: 'error',
      comment:
        'The ORM layer (entities, migrations, pool) knows nothing of the layers built on it. The one exception is ' +
        'the pure username-key function, which a data migration must compute exactly as sign-in does.',
      from: { path: '^src/db/' },
      to: {
        path: '^src/',
        pathNot: ['^src/db/', '^src/contracts/', '^src/config\\.ts$', '^src/errors\\.ts$', '^src/net/', '^src/services/auth/usernameKeys\\.ts$'],
      },
    },
    {
      name: 'routers-below-transports',
      severity: 'error',
      comment: 'Procedures are reached by the transports, never the other way round.',
      from: { path: '^src/routers/' },
      to: { path: ['^src/rest/', '^src/plugins/', '^src/app\\.ts$', '^src/service\\.ts$', '^src/events/(socket|stream|plugin)\\.ts$'] },
    },
    {
      name: 'dashboard-through-the-client',
      severity: 'error',
      comment: 'The dashboard reaches the server only through the typed client and the vocabulary (CONTRACT §4.9).',
      from: { path: '^web/src/' },
      to: { path: '^src/', pathNot: ['^src/client/', '^src/contracts/'] },
    },
    {
      name: 'client-through-types',
      severity: 'error',
      comment: "The typed client sees the server only as AppRouter's type and the vocabulary.",
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: ['^src/client/', '^src/contracts/', '^src/routers/index\\.ts$'] },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages' subpath exports (`kysely/helpers/postgres`) resolve as Node resolves them.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^web/dist/' },
  },
};
