// The request context's EntityManager: forked lazily, once, carried by copies, read through one shared getter.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createContextInner } from '../src/context/index.ts';
import { startTestService, type TestService } from './helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

describe('the request context’s em', () => {
  it('is forked on first read only, and the same fork on every later read', () => {
    const fork = vi.spyOn(service.deps.orm.em, 'fork');
    try {
      const ctx = createContextInner({ deps: service.deps });
      expect(fork).not.toHaveBeenCalled();
      const em = ctx.em;
      expect(ctx.em).toBe(em);
      expect(fork).toHaveBeenCalledTimes(1);
      expect(createContextInner({ deps: service.deps }).em).not.toBe(em);
    } finally {
      fork.mockRestore();
    }
  });

  it('is carried as that fork by a spread copy (tRPC’s context merge, the signed-in tier’s { ...ctx, actor })', () => {
    const ctx = createContextInner({ deps: service.deps });
    const copy = { ...ctx, actor: null };
    expect(copy.em).toBe(ctx.em);
    expect(copy.deps).toBe(ctx.deps);
    expect(copy.trace).toBe(ctx.trace);
  });

  it('is one getter shared by every context, not a closure per request', () => {
    // A getter closure per request kept each request's whole object graph alive past two scavenges.
    const descriptorOf = (ctx: object) => Object.getOwnPropertyDescriptor(ctx, 'em');
    const first = descriptorOf(createContextInner({ deps: service.deps }));
    expect(first).toMatchObject({ get: expect.any(Function), enumerable: true });
    // Functions are equal only when they are the same function.
    expect(descriptorOf(createContextInner({ deps: service.deps }))).toEqual(first);
  });
});
