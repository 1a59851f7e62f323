// The rate-limiter-flexible table (CONTRACT §5), hand-written: it has no entity, so the generator skips it.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261121132852_rate_limits extends Migration {

  override name = 'Migration20261121132852_rate_limits';

  // Frozen copy of RATE_LIMIT_TABLE_DDL (src/limits/stores.ts); tests/limits.shared-store checks the migrated table.
  override up(): void | Promise<void> {
    // Unlogged: a counter write commits without waiting for a WAL flush (the fsync would cost more than the
    // request), and counters lost in a server crash only reset the limits.
    this.addSql(`create unlogged table "rate_limit_counters" ("key" varchar(255) primary key, "points" integer not null default 0, "expire" bigint);`);
    this.addSql(`create index "rate_limit_counters_expire_index" on "rate_limit_counters" ("expire");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "rate_limit_counters" cascade;`);
  }

}
