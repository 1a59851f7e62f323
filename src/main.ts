// Process entry: check the runtime, read config, start the service, listen, and shut down gracefully on signals.
// (bin/agent-org.mjs repeats the version check in plain JavaScript for Nodes too old to load this file.)
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(
    `agent-org needs Node.js 22 or newer (found ${process.versions.node}). Run it through npm (\`npm start\`), which uses the project's own Node 24.`,
  );
  process.exit(1);
}

// V8 keeps compiled (and type-stripped) modules on disk, so a restart skips most of the time parsing our
// dependencies takes (docs/foundation.md#measured-reasons-behind-the-code); NODE_COMPILE_CACHE may
// name the directory.
const { enableCompileCache } = await import('node:module');
enableCompileCache();

const { default: closeWithGrace } = await import('close-with-grace');
const { loadConfig, ConfigError } = await import('./config.ts');
const { createLogger } = await import('./logger.ts');
const { DRAIN_TIMEOUT_MS } = await import('./plugins/shutdown.ts');
const { createService } = await import('./service.ts');

let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

const logger = createLogger(config.logLevel);
let service: Awaited<ReturnType<typeof createService>> | undefined;

// Set when the embedded database is lost for good: the process then stops and exits non-zero.
let fatal: Error | undefined;

// In-flight requests get DRAIN_TIMEOUT_MS to finish (then their connections are cut, src/plugins/shutdown.ts);
// the delay here is only the last resort should closing the database hang as well.
const { close } = closeWithGrace({ delay: DRAIN_TIMEOUT_MS + 10_000, logger }, async ({ err, signal }) => {
  if (err) logger.error({ err }, 'shutting down after an error');
  else if (!fatal) logger.info({ signal }, 'shutting down');
  await service?.close();
  // close-with-grace exits 1 when this throws: a supervisor must see that the service did not stop by choice.
  if (fatal) throw fatal;
});

try {
  service = await createService(config, logger);
  void service.db.embedded?.failure.then((error) => {
    fatal = error;
    logger.fatal({ err: error }, 'the embedded database is gone; stopping so a supervisor can restart the service');
    void close();
  });
  await service.app.listen({ port: config.port, host: config.host });
  logger.info({ url: config.publicUrl, docs: `${config.publicUrl}/docs` }, 'agent-org is listening');
} catch (error) {
  logger.fatal({ err: error }, 'failed to start');
  await service?.close().catch(() => undefined);
  process.exit(1);
}
