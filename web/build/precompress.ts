// A Vite plugin that writes brotli and gzip copies of the built text assets, so the service never compresses per request.
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Plugin } from 'vite';

const COMPRESSIBLE = /\.(?:js|mjs|css|html|svg|json|txt|webmanifest)$/;
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

export function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'agent-org:precompress',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async writeBundle(_options, bundle) {
      await Promise.all(
        Object.keys(bundle)
          .filter((file) => COMPRESSIBLE.test(file))
          .map(async (file) => {
            const full = path.join(outDir, file);
            const raw = await fs.readFile(full);
            const [br, gz] = await Promise.all([
              brotli(raw, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length } }),
              gzip(raw, { level: 9 }),
            ]);
            // A variant that is not smaller is not worth serving.
            if (br.length < raw.length) await fs.writeFile(`${full}.br`, br);
            if (gz.length < raw.length) await fs.writeFile(`${full}.gz`, gz);
          }),
      );
    },
  };
}
