// Counts a PostgreSQL client's round trips by relaying its connections and reading the frontend protocol: each Sync or simple Query is one.
import net from 'node:net';

// Startup-phase request codes (PostgreSQL protocol, "Message Formats"): answered by the server with one
// byte, after which the client sends its real StartupMessage; a cancel request ends the connection.
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
// node-postgres ends every extended-protocol query (Parse/Bind/Describe/Execute) with one Sync and sends a
// query without parameters as one Query; the server answers each with ReadyForQuery, so one of either
// message is one wait for the server.
const SYNC = 'S'.charCodeAt(0);
const QUERY = 'Q'.charCodeAt(0);

export type RoundTripCounter = {
  /** `databaseUrl` with its host and port replaced by the relay's. */
  url: string;
  /** Round trips so far on every connection not ignored. */
  roundTrips(): number;
  close(): Promise<void>;
};

/**
 * A relay on 127.0.0.1 in front of the PostgreSQL that `databaseUrl` names, which it reaches over TCP on
 * 127.0.0.1 at that URL's port (an embedded cluster listens there besides its Unix socket). Connections
 * whose `application_name` is in `ignore` (a job queue's, a notification listener's) are relayed but not
 * counted. Plain connections only: a client that asks for TLS and gets it cannot be read.
 */
export async function countRoundTrips(databaseUrl: string, opts: { ignore?: readonly string[] } = {}): Promise<RoundTripCounter> {
  const target = new URL(databaseUrl);
  const ignore = new Set(opts.ignore ?? []);
  const sockets = new Set<net.Socket>();
  let count = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: Number(target.port) });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
      socket.on('error', () => socket.destroy());
    }
    const reader = frontendReader(ignore, () => count++);
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      reader(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the round-trip relay has no TCP address');
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    roundTrips: () => count,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Reads one connection's client-to-server bytes as they come, calling `counted` for each Sync or Query. */
function frontendReader(ignore: ReadonlySet<string>, counted: () => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  let started = false;
  let counting = true;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      if (!started) {
        // Startup-phase messages have no type byte: length (itself included), then a code.
        if (pending.length < 8) return;
        const length = pending.readInt32BE(0);
        if (pending.length < length) return;
        const code = pending.readInt32BE(4);
        if (code === CANCEL_REQUEST) counting = false;
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) {
          started = true;
          counting &&= !ignore.has(startupParameters(pending.subarray(8, length)).get('application_name') ?? '');
        }
        pending = pending.subarray(length);
        continue;
      }
      // Then a type byte and a length that counts itself but not the type.
      if (pending.length < 5) return;
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) return;
      const type = pending[0];
      if (counting && (type === SYNC || type === QUERY)) counted();
      pending = pending.subarray(1 + length);
    }
  };
}

/** A StartupMessage's parameters: name and value strings, each NUL-terminated, then one more NUL. */
function startupParameters(body: Buffer): Map<string, string> {
  const words = body.toString('utf8').split('\0');
  const parameters = new Map<string, string>();
  for (let i = 0; i + 1 < words.length && words[i] !== ''; i += 2) parameters.set(words[i]!, words[i + 1]!);
  return parameters;
}
