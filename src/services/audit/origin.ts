// Where a change comes from (the kind of actor, its API key, the client's address, the request), carried with the call that makes it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ActorType } from '../../contracts/audit.ts';

/**
 * The facts of a change that belong to the request rather than to the business rule: what the audit log
 * records beside the actor's username (CONTRACT §4.13).
 */
export type Origin = Readonly<{ actorType: ActorType; apiKeyId: string | null; ip: string | null; requestId: string | null }>;

/** Changes the service makes on its own (the expiry sweep, anything outside a request). */
export const SYSTEM_ORIGIN: Origin = Object.freeze({ actorType: 'system', apiKeyId: null, ip: null, requestId: null });

/** Changes an operator makes with `npm run admin` (no request, no username in the API). */
export const ADMIN_ORIGIN: Origin = Object.freeze({ actorType: 'admin', apiKeyId: null, ip: null, requestId: null });

/*
 * Why an AsyncLocalStorage and not a parameter: these facts are known only to the transport (the client's
 * address after TRUST_PROXY, the request id, the credential), and every change of every area needs them at
 * the one place that records it (events/record.ts). Passed explicitly they would be a fifth argument of each
 * service and of each helper between a service and recordEvent, which no business rule reads. Set once where
 * a call enters (the tRPC tiers, the admin commands), they cannot be forgotten by a new service, and a change
 * made outside any call is the system's by construction. MikroORM keeps its request context the same way.
 */
const current = new AsyncLocalStorage<Origin>();

/** Runs `work` (and everything it awaits or starts) as changes from `origin`. */
export function withOrigin<T>(origin: Origin, work: () => T): T {
  return current.run(origin, work);
}

/** The origin of the call running now; the system's outside any. */
export function currentOrigin(): Origin {
  return current.getStore() ?? SYSTEM_ORIGIN;
}
