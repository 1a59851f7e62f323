// Builds the web dashboard: `prepare` (after npm ci/install) and `ensure` (rebuild only when a source is newer than the build).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const webDir = path.join(root, 'web');
const builtIndex = path.join(webDir, 'dist', 'index.html');

/** Everything the bundle is made of: the app, its build config, the typed client and the API schemas it imports. */
const SOURCES = ['web/src', 'web/public', 'web/build', 'web/index.html', 'web/vite.config.ts', 'src/client', 'src/routers', 'src/services', 'src/data', 'package-lock.json'];

export async function buildDashboard(): Promise<void> {
  const { build } = await import('vite');
  await build({ configFile: path.join(webDir, 'vite.config.ts'), logLevel: 'warn' });
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

async function viteInstalled(): Promise<boolean> {
  try {
    await import('vite');
    return true;
  } catch {
    return false;
  }
}

if (import.meta.main) {
  const command = process.argv[2];
  if (command === 'prepare') {
    // `npm ci --omit=dev` has no Vite: the service then runs without a dashboard (and says so at boot).
    if (await viteInstalled()) await buildDashboard();
    else console.warn('web: Vite is not installed (npm ci --omit=dev?); the dashboard is not built and / is not served.');
  } else if (command === 'ensure') {
    console.log(`web: ${await ensureDashboard()}`);
  } else {
    console.error('usage: node scripts/web.ts prepare|ensure');
    process.exitCode = 2;
  }
}
