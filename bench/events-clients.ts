// The WebSocket clients of bench/events.ts, in their own process: JSON-line commands on stdin, answers on stdout.
// Every frame that carries a `"title":"t<epoch ms>"` stamp adds one latency sample (receive time − stamp).
import readline from 'node:readline';
import WebSocket from 'ws';
import { z } from 'zod';

const Command = z.discriminatedUnion('type', [
  z.object({ type: z.literal('connect'), urls: z.array(z.string()), subscribe: z.record(z.string(), z.unknown()).nullable() }),
  z.object({ type: z.literal('collect') }),
  z.object({ type: z.literal('close') }),
]);

const STAMP = '"title":"t';
const now = () => performance.timeOrigin + performance.now();
let sockets: WebSocket[] = [];
let samples: number[] = [];
let frames = 0;

const reply = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

function open(url: string, subscribe: object | null): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.on('message', (data: Buffer) => {
      const received = now();
      frames++;
      const text = data.toString('utf8');
      const at = text.indexOf(STAMP);
      if (at >= 0) samples.push(received - Number(text.slice(at + STAMP.length, text.indexOf('"', at + STAMP.length))));
    });
    ws.once('open', () => {
      if (subscribe) ws.send(JSON.stringify(subscribe));
      resolve(ws);
    });
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${String(res.statusCode)}`)));
  });
}

for await (const line of readline.createInterface({ input: process.stdin })) {
  const command = Command.parse(JSON.parse(line));
  if (command.type === 'connect') {
    for (let i = 0; i < command.urls.length; i += 50) {
      sockets.push(...(await Promise.all(command.urls.slice(i, i + 50).map((url) => open(url, command.subscribe)))));
    }
    reply({ type: 'connected', count: sockets.length });
  } else if (command.type === 'collect') {
    reply({ type: 'samples', samples, frames });
    samples = [];
    frames = 0;
  } else {
    await Promise.all(sockets.map((ws) => new Promise((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve(null) : (ws.once('close', resolve), ws.close())))));
    sockets = [];
    reply({ type: 'closed' });
  }
}
