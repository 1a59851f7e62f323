// A webhook receiver for agent-org: verifies each delivery with the standardwebhooks package, drops repeats by
// webhook-id, and prints the event. Plain Node (>= 18), no framework: run it, point a webhook at it.
//
//   WEBHOOK_SECRET=whsec_... node receiver.mjs        # listens on http://127.0.0.1:9000/
//
// See README.md beside this file, and docs/webhooks.md in the repository.
import { createServer } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('set WEBHOOK_SECRET to the secret POST /api/v1/webhooks answered with (whsec_...)');
  process.exit(2);
}
const webhook = new Webhook(secret);
const port = Number(process.env.PORT ?? 9000);
const host = process.env.HOST ?? '127.0.0.1';

// Deliveries are at least once: the same webhook-id may come again (a retry whose answer was lost, a
// redelivery). Remember the ids already handled; a real receiver keeps them in its database.
const seen = new Set();
const MAX_SEEN = 100_000;

// Events may arrive out of order: keep the highest event id handled per resource if order matters.
let highestEventId = 0n;

/** The body exactly as sent: the signature covers these bytes, not a re-serialized object. */
function readBody(req, limit = 1024 * 1024) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error('body too large'));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const server = createServer(async (req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  let body;
  try {
    body = await readBody(req);
  } catch {
    res.writeHead(413).end();
    return;
  }
  let event;
  try {
    // Checks webhook-signature over `<webhook-id>.<webhook-timestamp>.<body>` with the secret, and that
    // webhook-timestamp is within five minutes of now (replayed old requests are refused).
    event = webhook.verify(body, req.headers);
  } catch (error) {
    const reason = error instanceof WebhookVerificationError ? error.message : 'bad request';
    console.warn(`refused a request: ${reason}`);
    res.writeHead(400, { 'content-type': 'text/plain' }).end(reason);
    return;
  }
  const deliveryId = req.headers['webhook-id'];
  if (seen.has(deliveryId)) {
    // Already handled: answer 2xx again so the sender stops retrying.
    res.writeHead(204).end();
    return;
  }
  seen.add(deliveryId);
  if (seen.size > MAX_SEEN) seen.delete(seen.values().next().value);

  // A test delivery (POST /webhooks/{id}/test) has an id of its own, not a decimal event id.
  if (/^\d+$/.test(event.id) && BigInt(event.id) > highestEventId) highestEventId = BigInt(event.id);
  console.log(`${event.occurred_at} ${event.type} (event ${event.id}, delivery ${deliveryId}) by ${event.actor ?? 'the system'}`);
  console.log(JSON.stringify(event.data, null, 2));

  // Answer quickly (within WEBHOOK_TIMEOUT_S, 10 s by default) and do slow work afterwards; any 2xx is a success.
  res.writeHead(204).end();
});

server.listen(port, host, () => console.log(`webhook receiver listening on http://${host}:${port}/`));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
