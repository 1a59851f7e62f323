// Builds the web dashboard: `prepare` (after npm ci/install) and `ensure` (rebuild only when a source is newer than the build).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const webDir = path.join(root, 'web');
const builtIndex = path.join(webDir, 'dist', 'index.html');
// Vite's CLI; its package exports do not include the bin, so it is found where npm puts it.
const viteCli = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');

/** Everything the bundle is made of: the app, its build config, the typed client and the API schemas it imports. */
const SOURCES = ['web/src', 'web/public', 'web/build', 'web/index.html', 'web/vite.config.ts', 'src/client', 'src/routers', 'src/services', 'src/data', 'package-lock.json'];

/**
 * `vite build` in its own process with NODE_ENV=production: run from a test (NODE_ENV=test) in-process, the
 * libraries would keep their development-only code and the bundle would not be the one `npm ci` ships.
 */
export async function buildDashboard(): Promise<void> {
  const child = spawn(process.execPath, [viteCli, 'build', '--config', path.join(webDir, 'vite.config.ts'), '--logLevel', 'warn'], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: 'inherit',
  });
  const code = await new Promise<number | null>((resolve, reject) => child.on('error', reject).on('exit', resolve));
  if (code !== 0) throw new Error(`vite build exited with ${String(code)}`);
}

async function newestSource(): Promise<number> {
  let newest = 0;
  for (const source of SOURCES) {
    const full = path.join(root, source);
    const stat = await fs.stat(full).catch(() => null);
    if (!stat) continue;
    const files = stat.isDirectory() ? (await fs.readdir(full, { recursive: true })).map((f) => path.join(full, f)) : [full];
    for (const file of files) newest = Math.max(newest, (await fs.stat(file)).mtimeMs);
  }
  return newest;
}

/** Builds the dashboard unless web/dist is newer than every source. */
export async function ensureDashboard(): Promise<'built' | 'fresh'> {
  const built = await fs.stat(builtIndex).catch(() => null);
  if (built && built.mtimeMs >= (await newestSource())) return 'fresh';
  await buildDashboard();
  return 'built';
}

if (import.meta.main) {
  const command = process.argv[2];
  if (command === 'prepare') {
    // `npm ci --omit=dev` has no Vite: the service then runs without a dashboard (and says so at boot).
    if (existsSync(viteCli)) await buildDashboard();
    else console.warn('web: Vite is not installed (npm ci --omit=dev?); the dashboard is not built and / is not served.');
  } else if (command === 'ensure') {
    console.log(`web: ${await ensureDashboard()}`);
  } else {
    console.error('usage: node scripts/web.ts prepare|ensure');
    process.exitCode = 2;
  }
}
