// Opens the database the configuration names (or the embedded one), migrated and ready; closes it again.
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './embedded.ts';
import { migrateWithLock } from './migrate.ts';
import { ormOptions } from './ormConfig.ts';

type Log = { debug(msg: string): void; info(msg: string): void; warn(msg: string): void };

export type Database = {
  orm: MikroORM;
  url: string;
  embedded: EmbeddedDatabase | null;
  close(): Promise<void>;
};

export async function openDatabase(config: Config, log: Log, opts: { migrate?: boolean } = {}): Promise<Database> {
  const embedded = config.databaseUrl ? null : await startEmbeddedPostgres(path.join(config.dataDir, 'pg'), log);
  const url = config.databaseUrl ?? embedded?.url ?? '';
  try {
    const orm = await MikroORM.init(ormOptions(url));
    if (opts.migrate !== false) {
      const applied = await migrateWithLock(orm);
      if (applied.length > 0) log.info(`applied migrations: ${applied.join(', ')}`);
    }
    return {
      orm,
      url,
      embedded,
      async close() {
        await orm.close(true);
        await embedded?.stop();
      },
    };
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
}
