// events_publish() notifies with the highest id it published, so an instance that has already read that far
// skips the read (MikroORM's schema diff does not compare routine bodies: written by hand, as the entity says).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261124040000_events_publish_notifies_id extends Migration {

  override name = 'Migration20261124040000_events_publish_notifies_id';

  override up(): void {
    this.addSql(`create or replace function "events_publish"("batch" integer) returns integer language plpgsql as $$
declare
  published integer;
  last_id bigint;
begin
  perform pg_advisory_xact_lock(8326712098451934427);
  with picked as (
    select "row_id" from "events" where "id" is null order by "row_id" limit "batch"
  ), numbered as (
    select "row_id", nextval('events_id_seq') as "id" from picked
  ), updated as (
    update "events" set "id" = numbered."id" from numbered where "events"."row_id" = numbered."row_id" returning "events"."id"
  )
  select count(*), max("id") into published, last_id from updated;
  if published > 0 then
    perform pg_notify('agent_org_events', last_id::text);
  end if;
  return published;
end
$$;`);
  }

  override down(): void {
    this.addSql(`create or replace function "events_publish"("batch" integer) returns integer language plpgsql as $$
declare
  published integer;
begin
  perform pg_advisory_xact_lock(8326712098451934427);
  with picked as (
    select "row_id" from "events" where "id" is null order by "row_id" limit "batch"
  ), numbered as (
    select "row_id", nextval('events_id_seq') as "id" from picked
  )
  update "events" set "id" = numbered."id" from numbered where "events"."row_id" = numbered."row_id";
  get diagnostics published = row_count;
  if published > 0 then
    perform pg_notify('agent_org_events', '');
  end if;
  return published;
end
$$;`);
  }

}
