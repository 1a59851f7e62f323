// events.subscribe: live events over SSE (tRPC httpSubscriptionLink), the dashboard's alternative to the WebSocket.
import { subscribeEvents } from '../../events/subscription.ts';
import { authedProcedure, router } from '../../trpc.ts';
import { SubscribeEventsInput } from '../../contracts/events.ts';

export const eventsRouter = router({
  subscribe: authedProcedure
    .meta({ apiKey: 'events:read' })
    .input(SubscribeEventsInput)
    .subscription(({ ctx, input, signal }) => subscribeEvents({ em: ctx.em, events: ctx.deps.events }, ctx.actor, input, signal)),
});
