// The events area's one store: the outbox, its retention mark and the open-stream registry (tickets are the auth store's).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { NotNull } from 'kysely';
import { EventsPublish } from '../db/entities/Event.ts';
import { kysely, type Stored } from '../db/kysely.ts';
import { prepared, type Placeholder } from '../db/prepared.ts';
import { isRole, type Role } from '../contracts/roles.ts';
import { categoryOf, type NewAuditEntry } from '../services/audit/store.ts';
import { webhookIdsFor } from '../services/webhooks/store.ts';
import type { Channel } from '../contracts/events.ts';

/** A published event: one that has its public id. */
export type StoredEvent = Omit<Stored<'events'>, 'id'> & { id: number };
export type NewEvent = Omit<Stored<'events'>, 'id' | 'rowId'>;

/** How the change behind an event came about, for its audit entry (its time, type, actor and data are the event's). */
export type EventOrigin = Pick<NewAuditEntry, 'actorType' | 'apiKeyId' | 'ipAddress' | 'requestId' | 'targetType' | 'targetId'>;

type RecordValues = NewEvent & EventOrigin & { category: string; webhookTypes: string[] };

// Every change records its event through this statement: compiled once (db/prepared.ts), not built per request.
const recordStatement = prepared('event_record', (db, $: Placeholder<RecordValues>) =>
  db
    .with('recorded', (q) =>
      q
        .insertInto('events')
        .values({ type: $('type'), channel: $('channel'), occurredAt: $('occurredAt'), actor: $('actor'), audienceUserId: $('audienceUserId'), data: $('data') })
        .returning('rowId'),
    )
    .with('audited', (q) =>
      q.insertInto('audit_entries').values({
        occurredAt: $('occurredAt'),
        type: $('type'),
        category: $('category'),
        actor: $('actor'),
        actorType: $('actorType'),
        apiKeyId: $('apiKeyId'),
        ipAddress: $('ipAddress'),
        requestId: $('requestId'),
        targetType: $('targetType'),
        targetId: $('targetId'),
        data: $('data'),
      }),
    )
    .selectFrom('recorded')
    .select(['recorded.rowId', webhookIdsFor(db, $('webhookTypes')).as('webhookIds')])
    .$narrowType<{ webhookIds: string[] }>(),
);

/**
 * Writes an event row and its audit entry, and reads the ids of the webhooks it goes to (`deliverable`: a public
 * event, matched by its type or `<channel>.*`), all in one statement, the two inserts as data-modifying CTEs:
 * recording an event costs its change's transaction one round trip. The event gets its public id when it is
 * published, after that transaction commits; its `row_id`, returned, is how what was queued with it (a webhook
 * delivery) finds it until then.
 */
export async function insertEvent(em: EntityManager, event: NewEvent, origin: EventOrigin, deliverable: boolean): Promise<{ rowId: number; webhookIds: string[] }> {
  const webhookTypes = deliverable ? [event.type, `${event.channel}.*`] : [];
  const { actorType, apiKeyId, ipAddress, requestId, targetType, targetId } = origin;
  const values = { ...event, actorType, apiKeyId, ipAddress, requestId, targetType, targetId, category: categoryOf(event.type), webhookTypes };
  const [row] = await recordStatement(em, values);
  if (!row) throw new Error('the event insert returned no row');
  return row;
}

/** The event written as `rowId`, published or not; undefined once purged. */
export async function findEventByRowId(em: EntityManager, rowId: number): Promise<Stored<'events'> | undefined> {
  return kysely(em).selectFrom('events').selectAll().where('rowId', '=', rowId).executeTakeFirst();
}

/** Publishes up to `batch` committed events (see EventsPublish); returns how many. Runs as its own transaction. */
export async function publishEvents(em: EntityManager, batch: number): Promise<number> {
  const [row] = await publishStatement(em, { batch });
  return row?.published ?? 0;
}

// Every write request publishes after its commit: planned once per connection.
const publishStatement = prepared('events_publish', (db, $: Placeholder<{ batch: number }>) =>
  db.selectNoFrom((eb) => eb.fn<number>(EventsPublish.name, [$('batch')]).as('published')),
);

/** The highest committed event id, 0 when there is none. */
export async function latestEventId(em: EntityManager): Promise<number> {
  const row = await kysely(em)
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return row?.id ?? 0;
}

/** Committed events after `afterId`, oldest first, every channel (the instance's fan-out reads these). */
export async function eventsAfter(em: EntityManager, afterId: number, limit: number): Promise<StoredEvent[]> {
  return kysely(em).selectFrom('events').selectAll().where('id', '>', afterId).$narrowType<{ id: NotNull }>().orderBy('id').limit(limit).execute();
}

/**
 * One page of a replay: events after `afterId` on `channels`, and the retention mark, read in ONE snapshot
 * so that a purge committing in between cannot remove events silently.
 */
export async function replayPage(em: EntityManager, afterId: number, channels: readonly Channel[], limit: number): Promise<{ purgedThrough: number; events: StoredEvent[] }> {
  return em.transactional(
    async (tx) => {
      const db = kysely(tx);
      const mark = await db.selectFrom('event_retention').select('purgedThrough').where('id', '=', 1).executeTakeFirst();
      const events = await db
        .selectFrom('events')
        .selectAll()
        .where('id', '>', afterId)
        .$narrowType<{ id: NotNull }>()
        .where('channel', 'in', channels)
        .orderBy('id')
        .limit(limit)
        .execute();
      return { purgedThrough: mark?.purgedThrough ?? 0, events };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

/** The retention mark: every event at or below this id may have been purged. */
export async function purgedThrough(em: EntityManager): Promise<number> {
  const mark = await kysely(em).selectFrom('event_retention').select('purgedThrough').where('id', '=', 1).executeTakeFirst();
  return mark?.purgedThrough ?? 0;
}

/**
 * Deletes the oldest events up to (not including) the first one at or after `cutoff`, and moves the
 * retention mark to the last deleted id. The mark row is locked first, so purges of several instances
 * run one after the other. Returns how many events were deleted.
 */
export async function purgeEventsBefore(em: EntityManager, cutoff: Date): Promise<number> {
  return em.transactional(async (tx) => {
    const db = kysely(tx);
    await db.selectFrom('event_retention').select('id').where('id', '=', 1).forUpdate().execute();
    const youngest = await db
      .selectFrom('events')
      .select('id')
      .where('id', 'is not', null)
      .$narrowType<{ id: NotNull }>()
      .where('occurredAt', '>=', cutoff)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    // A webhook delivery reads its event when it first goes out (its body is the event with its id): the
    // oldest event a delivery has not read yet is kept, and every one after it, however old.
    const unread = await db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('events as e', 'e.rowId', 'd.eventRowId')
      .select((eb) => eb.fn.min('e.id').as('id'))
      .where('d.body', 'is', null)
      .executeTakeFirst();
    const kept = [youngest?.id, unread?.id ?? undefined].filter((id): id is number => id !== undefined && id !== null);
    const firstKept = kept.length > 0 ? { id: Math.min(...kept) } : undefined;
    // Deleting a prefix in id order keeps "everything after the mark is still here" true, even when a
    // long transaction committed an older change after younger ones.
    let last = db.selectFrom('events').select((eb) => eb.fn.max('id').as('id'));
    if (firstKept) last = last.where('id', '<', firstKept.id);
    const through = (await last.executeTakeFirst())?.id ?? null;
    if (through === null) return 0;
    const deleted = await db.deleteFrom('events').where('id', '<=', through).executeTakeFirst();
    await db
      .updateTable('event_retention')
      .set((eb) => ({ purgedThrough: eb.fn('greatest', [eb.ref('purgedThrough'), eb.val(through)]) }))
      .where('id', '=', 1)
      .execute();
    return Number(deleted.numDeletedRows);
  });
}

/** An open stream: the session it acts as, or else its API key. */
export type StreamRecord = { id: string; userId: string; sessionId: string | null; apiKeyId: string | null; instanceId: string };

/**
 * Registers an open stream if its user has fewer than `max` live ones (on any instance); false when the
 * cap is reached. The user's row is locked so that concurrent openings count each other. A stream whose
 * instance stopped refreshing it before `staleBefore` no longer counts.
 */
export async function registerStream(em: EntityManager, stream: StreamRecord, opts: { now: Date; staleBefore: Date; max: number }): Promise<boolean> {
  const db = kysely(em);
  await db.selectFrom('users').select('id').where('id', '=', stream.userId).forUpdate().execute();
  const open = await db
    .selectFrom('event_streams')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('userId', '=', stream.userId)
    .where('seenAt', '>', opts.staleBefore)
    .executeTakeFirst();
  if (Number(open?.n ?? 0) >= opts.max) return false;
  await db
    .insertInto('event_streams')
    .values({ ...stream, openedAt: opts.now, seenAt: opts.now })
    .execute();
  return true;
}

export async function unregisterStreams(em: EntityManager, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await kysely(em).deleteFrom('event_streams').where('id', 'in', ids).execute();
}

/** Marks streams as still open (a row nobody marks goes stale: its instance died, or the upgrade never finished). */
export async function touchStreams(em: EntityManager, ids: readonly string[], now: Date): Promise<void> {
  await kysely(em).updateTable('event_streams').set({ seenAt: now }).where('id', 'in', ids).execute();
}

/** Forgets streams nobody has marked as open since `staleBefore`. */
export async function removeStaleStreams(em: EntityManager, staleBefore: Date): Promise<number> {
  const deleted = await kysely(em).deleteFrom('event_streams').where('seenAt', '<=', staleBefore).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}

/** Forgets every stream of a stopping instance. */
export async function removeInstanceStreams(em: EntityManager, instanceId: string): Promise<void> {
  await kysely(em).deleteFrom('event_streams').where('instanceId', '=', instanceId).execute();
}

/**
 * The current state of sessions behind open streams: ended (revoked, its user gone, or past its refresh
 * window, so that nothing can renew it any more) or its user's authorization.
 */
export type SessionState = { sessionId: string; ended: boolean; role: Role | null; mustChangePassword: boolean };

export async function sessionStates(em: EntityManager, sessionIds: readonly string[], now: Date): Promise<SessionState[]> {
  if (sessionIds.length === 0) return [];
  const rows = await kysely(em)
    .selectFrom('sessions as s')
    .leftJoin('users as u', 'u.id', 's.userId')
    .select(['s.id', 's.revokedAt', 's.refreshExpiresAt', 'u.role', 'u.mustChangePassword'])
    .where('s.id', 'in', sessionIds)
    .execute();
  const found = new Map(rows.map((r) => [r.id, r]));
  return sessionIds.map((sessionId) => {
    const row = found.get(sessionId);
    const role = row?.role !== undefined && row.role !== null && isRole(row.role) ? row.role : null;
    const ended = !row || row.revokedAt !== null || row.refreshExpiresAt <= now || role === null;
    return { sessionId, ended, role, mustChangePassword: row?.mustChangePassword ?? false };
  });
}
