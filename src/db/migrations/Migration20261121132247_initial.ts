import { Migration } from '@mikro-orm/migrations';

export class Migration20261121132247_initial extends Migration {

  override name = 'Migration20261121132247_initial';

  override up(): void | Promise<void> {
    this.addSql(`create table "app_setting" ("key" varchar(64) not null, "value" text not null, "created_at" timestamptz(3) not null, primary key ("key"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "app_setting" cascade;`);
  }

}
