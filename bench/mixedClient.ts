// The load generator of bench/mixed.ts, in its own process: N workers each loop over a weighted mix of
// operations until the time is up, and it prints per-operation latencies (ms) and failures as JSON.
// Arguments: base URL, JSON {me, requester, approver, logins: [{username, password}]}, seconds, workers.
const [base = '', tokensJson = '{}', secondsArg = '60', workersArg = '40'] = process.argv.slice(2);
type Setup = { me: string; requester: string; approver: string; logins: { username: string; password: string }[] };
const setup: Setup = JSON.parse(tokensJson);
const until = Date.now() + Number(secondsArg) * 1000;
const workers = Number(workersArg);
// Node's fetch keeps connections alive: each worker ends up with one of its own, as autocannon's connections.

type Stats = { latencies: number[]; failures: number; statuses: Record<string, number> };
const stats = new Map<string, Stats>();

async function timed(operation: string, method: string, path: string, token: string | null, body?: unknown): Promise<unknown> {
  const started = performance.now();
  let status: number;
  let json: unknown = null;
  try {
    const res = await fetch(base + path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    status = res.status;
    json = await res.json();
  } catch {
    // A refused or reset connection: counted as a failure like any non-2xx answer.
    status = 0;
  }
  const entry = stats.get(operation) ?? { latencies: [], failures: 0, statuses: {} };
  stats.set(operation, entry);
  entry.latencies.push(performance.now() - started);
  entry.statuses[status] = (entry.statuses[status] ?? 0) + 1;
  if (status < 200 || status >= 300) entry.failures++;
  return json;
}

// Weights out of 100: reads dominate, logins (argon2) are rare, as on a dashboard.
const MIX: { weight: number; run: (i: number) => Promise<unknown> }[] = [
  { weight: 5, run: (i) => timed('auth.login', 'POST', '/api/v1/auth/login', null, setup.logins[i % setup.logins.length]) },
  { weight: 45, run: () => timed('auth.me', 'GET', '/api/v1/auth/me', setup.me) },
  { weight: 15, run: () => timed('users.list', 'GET', '/api/v1/users?limit=50', setup.me) },
  { weight: 15, run: () => timed('approvals.list', 'GET', '/api/v1/approvals?status=pending&limit=50', setup.approver) },
  {
    weight: 20,
    run: async (i) => {
      const created = await timed('approvals.create', 'POST', '/api/v1/approvals', setup.requester, {
        action_type: 'deploy:service',
        title: `bench ${i}`,
        description: 'mixed-load benchmark',
        risk_level: 'low',
      });
      const id = typeof created === 'object' && created !== null && 'data' in created && typeof created.data === 'object' && created.data !== null && 'id' in created.data ? created.data.id : null;
      if (typeof id === 'string') await timed('approvals.approve', 'POST', `/api/v1/approvals/${id}/approve`, setup.approver, { comment: null });
    },
  },
];

function pick(): (i: number) => Promise<unknown> {
  let r = Math.random() * 100;
  for (const op of MIX) {
    r -= op.weight;
    if (r < 0) return op.run;
  }
  return MIX[1]?.run ?? (() => Promise.resolve());
}

let iteration = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: workers }, async () => {
    while (Date.now() < until) await pick()(iteration++);
  }),
);
const seconds = (performance.now() - started) / 1000;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
const report = Object.fromEntries(
  [...stats].map(([operation, s]) => {
    const sorted = s.latencies.sort((a, b) => a - b);
    return [operation, { count: sorted.length, perSecond: sorted.length / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), failures: s.failures, statuses: s.statuses }];
  }),
);
process.stdout.write(JSON.stringify({ seconds, operations: report }));
