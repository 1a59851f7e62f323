// Which job queue sends the jobs of a database: code that is handed only an EntityManager (recordEvent) finds its instance's queue here.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { JobSender } from './jobType.ts';

/**
 * Keyed by the ORM's configuration object, which every EntityManager of that ORM (forks and transactions
 * included) shares. Why a registry at all: events are recorded from dozens of call sites, each holding only
 * the transaction's EntityManager, and the webhook deliveries of an event must be queued in that same
 * transaction (CONTRACT §4.12); threading the queue through every one of them would change every service's
 * signature for one consumer. Several services in one process (tests, a benchmark's two instances) each
 * have their own ORM, so each finds its own queue.
 */
const senders = new WeakMap<object, JobSender>();

/** Makes `sender` the queue of every EntityManager of `orm` (JobQueue.start does it). */
export function bindJobSender(orm: MikroORM, sender: JobSender): void {
  senders.set(orm.config, sender);
}

/** Forgets `sender` for `orm`, unless another has been bound since. */
export function unbindJobSender(orm: MikroORM, sender: JobSender): void {
  if (senders.get(orm.config) === sender) senders.delete(orm.config);
}

/** The job queue of the ORM `em` belongs to; null when none was started on it (a bare script). */
export function jobSenderOf(em: EntityManager): JobSender | null {
  return senders.get(em.config) ?? null;
}
