// The time source every rule reads; injected so expiry, windows and sessions are testable without sleeping.
export type Clock = { now(): Date };

export const systemClock: Clock = { now: () => new Date() };
