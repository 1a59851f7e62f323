// EventStream on its own: a stream closed while its `since` replay is still reading ends quietly.
import { describe, expect, it } from 'vitest';
import type { HubEvent } from '../src/events/hub.ts';
import { EventStream, type Outlet } from '../src/events/stream.ts';

const outlet = (sent: HubEvent[]): Outlet => ({ send: (event) => void sent.push(event), sessionEnded: () => {}, overflow: () => {}, shutdown: () => {} });
const viewer = { userId: 'u1', sessionId: 's1', apiKey: null, role: 'ceo', mustChangePassword: false, deleted: false } as const;

describe('a stream closed during its replay', () => {
  it('lets subscribe() settle without an error and sends nothing more', async () => {
    const page = Promise.withResolvers<HubEvent[]>();
    let replays = 0;
    const source = { position: 0, replay: () => (replays++, page.promise) };
    const sent: HubEvent[] = [];
    let closes = 0;
    const stream = new EventStream({ id: 'st1', viewer, source, outlet: outlet(sent), onClose: () => void closes++, maxHeldBytes: 1 << 20 });
    const subscribing = stream.subscribe(['approvals'], 0, () => {});
    await Promise.resolve();
    expect(replays).toBe(1);
    stream.close();
    page.resolve([]);
    await expect(subscribing).resolves.toBeUndefined();
    expect(sent).toEqual([]);
    expect(closes).toBe(1);
  });
});
