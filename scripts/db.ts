// Migration commands: `migrate` applies pending ones, `create` generates one from the entities, `check` fails if one is missing.
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';

const command = process.argv[2];
const log = { debug: () => {}, info: (m: string) => console.log(m), warn: (m: string) => console.warn(m) };
const db = await openDatabase(loadConfig(), log, { migrate: true });
let exitCode = 0;
try {
  if (command === 'migrate') {
    console.log('database is up to date');
  } else if (command === 'create') {
    const result = await db.orm.migrator.create(undefined, false, false, process.argv[3]);
    console.log(result.fileName ? `created ${result.fileName}` : 'no changes: the migrations already match the entities');
  } else if (command === 'check') {
    // The database was just migrated; any remaining diff means an entity change has no migration.
    const needed = await db.orm.migrator.checkSchema();
    if (needed) {
      console.error('entities differ from the migrations: run `npm run db:migration:create`');
      exitCode = 1;
    } else console.log('migrations match the entities');
  } else {
    console.error('usage: node scripts/db.ts migrate|create [name]|check');
    exitCode = 2;
  }
} finally {
  await db.close();
}
process.exit(exitCode);
