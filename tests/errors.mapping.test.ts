// toApiError on real failures: PostgreSQL errors through Kysely and the ORM, lost connections, timeouts, unknown throws, wrapped causes.
import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { MikroORM } from '@mikro-orm/postgresql';
import { TRPCError } from '@trpc/server';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { InjectOptions } from 'fastify';
import { RefreshToken } from '../src/db/entities/RefreshToken.ts';
import { StageDecision } from '../src/db/entities/StageDecision.ts';
import { User } from '../src/db/entities/User.ts';
import { kysely } from '../src/db/kysely.ts';
import { ormOptions } from '../src/db/ormConfig.ts';
import { ApiError, ERROR_CODES, toApiError, toProblem, UNIQUE_VIOLATIONS } from '../src/errors.ts';
import { freePort } from '../src/net/freePort.ts';
import type { Role } from '../src/contracts/roles.ts';
import { usernameKey } from '../src/services/auth/usernameKeys.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';
import type { Clock } from '../src/contracts/clock.ts';

const GENERIC_500 = ERROR_CODES[8000].genericDetail;
const GENERIC_STORAGE = ERROR_CODES[8002].genericDetail;
const GENERIC_503 = ERROR_CODES[8001].genericDetail;

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
});
afterAll(() => svc.close());

/** What `work` rejects with; fails the test when it resolves. */
async function failureOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected the database to refuse');
}

/** The body a client would get for `error` (ProblemDetail form). */
const problemOf = (error: unknown) => toProblem(toApiError(error), { instance: 'req-1', publicUrl: 'http://agent-org.test' });

const now = () => new Date();
// The skeleton is unique per row, so an existing username collides on users_username_key_unique alone.
const newUserRow = (username: string, role: Role = 'observer') => ({
  id: randomUUID(),
  username,
  usernameKey: usernameKey(username),
  usernameSkeleton: randomUUID().replace(/-/g, ''),
  passwordHash: 'not-a-hash',
  role,
  mustChangePassword: false,
  createdAt: now(),
  updatedAt: now(),
});

/** A raw pg unique violation (Kysely does not wrap driver errors), from inserting an existing username again. */
async function rawUniqueViolation(): Promise<unknown> {
  const user = await createUser(svc);
  return failureOf(() => kysely(svc.db.orm.em.fork()).insertInto('users').values(newUserRow(user.username)).execute());
}

describe('unique violations → 409 through the UNIQUE_VIOLATIONS table', () => {
  it('a raw driver error from Kysely (pg DatabaseError) on users_username_key_unique → 409/4001 "username is already taken"', async () => {
    const error = await rawUniqueViolation();
    expect(error).toBeInstanceOf(pg.DatabaseError);
    expect(error).toMatchObject({ code: '23505', constraint: 'users_username_key_unique' });
    const mapped = toApiError(error);
    expect(mapped).toBeInstanceOf(ApiError);
    expect(mapped).toMatchObject({ errorCode: 4001, status: 409, detail: 'username is already taken' });
  });

  it("the ORM's UniqueConstraintViolationException on the same constraint → 409/4001 \"username is already taken\"", async () => {
    const user = await createUser(svc);
    const error = await failureOf(() => svc.db.orm.em.fork().insert(User, newUserRow(user.username)));
    expect(error).toBeInstanceOf(UniqueConstraintViolationException);
    expect(toApiError(error)).toMatchObject({ errorCode: 4001, status: 409, detail: 'username is already taken' });
  });

  it('a second CEO (users_one_ceo) → 409/4000 "there is already a CEO", through Kysely and through the ORM', async () => {
    const em = svc.db.orm.em.fork();
    // Whether or not the file's database has a CEO yet, it has one after this.
    const first = await kysely(em).insertInto('users').values(newUserRow(`ceo_${randomUUID()}`, 'ceo')).execute().then(() => null, (e: unknown) => e);
    if (first !== null) expect(first).toMatchObject({ code: '23505', constraint: 'users_one_ceo' });
    const viaKysely = await failureOf(() => kysely(em).insertInto('users').values(newUserRow(`ceo_${randomUUID()}`, 'ceo')).execute());
    const viaOrm = await failureOf(() => svc.db.orm.em.fork().insert(User, newUserRow(`ceo_${randomUUID()}`, 'ceo')));
    for (const error of [viaKysely, viaOrm]) {
      expect(error).toMatchObject({ code: '23505', constraint: 'users_one_ceo' });
      expect(toApiError(error)).toMatchObject({ errorCode: 4000, status: 409, detail: 'there is already a CEO' });
    }
  });

  it('an org role held twice (user_org_roles_pkey) → 409/4001', async () => {
    const user = await createUser(svc);
    const em = svc.db.orm.em.fork();
    const row = { userId: user.id, role: 'viewer' as const, scopedDepartments: [], createdAt: now() };
    await kysely(em).insertInto('user_org_roles').values(row).execute();
    const error = await failureOf(() => kysely(em).insertInto('user_org_roles').values(row).execute());
    expect(toApiError(error)).toMatchObject({ errorCode: 4001, status: 409, detail: 'the user already holds this org role' });
  });

  it('a stage decided twice (stage_decisions_task_stage_unique) → 409/4001', async () => {
    const user = await createUser(svc);
    const em = svc.db.orm.em.fork();
    const row = { taskId: `task-${randomUUID()}`, stageName: 'review', verdict: 'pass' as const, reason: null, decidedById: user.id, decidedBy: user.username, decidedAt: now() };
    await kysely(em).insertInto('stage_decisions').values(row).execute();
    const error = await failureOf(() => svc.db.orm.em.fork().insert(StageDecision, row));
    expect(error).toBeInstanceOf(UniqueConstraintViolationException);
    expect(toApiError(error)).toMatchObject({ errorCode: 4001, status: 409, detail: 'this stage has already been decided' });
  });

  it('a constraint the table does not name → 409/4001 "resource already exists", raw and ORM-wrapped', async () => {
    const em = svc.db.orm.em.fork();
    const table = `scratch_${randomUUID().replaceAll('-', '')}`;
    const constraint = `${table}_k_key`;
    expect(Object.keys(UNIQUE_VIOLATIONS)).not.toContain(constraint);
    await sql`create table ${sql.table(table)} (k text constraint ${sql.id(constraint)} unique)`.execute(kysely(em));
    await sql`insert into ${sql.table(table)} (k) values ('x')`.execute(kysely(em));
    const raw = await failureOf(() => sql`insert into ${sql.table(table)} (k) values ('x')`.execute(kysely(em)));
    expect(raw).toMatchObject({ code: '23505', constraint });
    expect(toApiError(raw)).toMatchObject({ errorCode: 4001, status: 409, detail: 'resource already exists' });

    // The ORM's wrapper around an entity's constraint that no client-facing rule names.
    expect(Object.keys(UNIQUE_VIOLATIONS)).not.toContain('refresh_tokens_pkey');
    const token = { tokenHash: randomUUID().replaceAll('-', ''), sessionId: 'none', createdAt: now(), expiresAt: now() };
    await svc.db.orm.em.fork().insert(RefreshToken, token);
    const wrapped = await failureOf(() => svc.db.orm.em.fork().insert(RefreshToken, token));
    expect(wrapped).toBeInstanceOf(UniqueConstraintViolationException);
    expect(toApiError(wrapped)).toMatchObject({ errorCode: 4001, status: 409, detail: 'resource already exists' });
  });
});

/**
 * Runs `run` on an ORM of its own and terminates its backend from outside while the query runs. Its own
 * pool, because a terminated backend may sit idle in a pool for a moment before the pool notices it is
 * gone, and the next query drawing it would fail in another test.
 */
async function terminatedMidQuery(run: (orm: MikroORM) => Promise<unknown>, marker: string): Promise<unknown> {
  const orm = await MikroORM.init(ormOptions(svc.databaseUrl));
  const admin = new pg.Client({ connectionString: svc.databaseUrl });
  await admin.connect();
  try {
    const pending = failureOf(() => run(orm));
    // Generous on a busy machine; the query itself would sleep longer than the test may run.
    const deadline = Date.now() + 15_000;
    let killed = 0;
    while (killed === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const res = await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query like $1',
        [`%${marker}%`],
      );
      killed = res.rowCount ?? 0;
    }
    expect(killed).toBeGreaterThan(0);
    return await pending;
  } finally {
    await admin.end();
    await orm.close(true);
  }
}

describe('a lost connection or a timeout → 503/8001, retryable, with the generic detail', () => {
  it('a backend terminated mid-query (57P01), through Kysely and through the ORM', async () => {
    const viaKysely = await terminatedMidQuery((orm) => sql`select pg_sleep(30) as kysely_victim`.execute(kysely(orm.em.fork())), 'kysely_victim');
    const viaOrm = await terminatedMidQuery((orm) => orm.em.fork().getConnection().execute('select pg_sleep(30) as orm_victim'), 'orm_victim');
    for (const error of [viaKysely, viaOrm]) {
      expect(toApiError(error)).toMatchObject({ errorCode: 8001, status: 503 });
      expect(problemOf(error)).toMatchObject({ status: 503, error_code: 8001, retryable: true, detail: GENERIC_503 });
    }
  });

  it('a statement timeout (57014)', async () => {
    const error = await failureOf(() =>
      svc.db.orm.em.fork().transactional(async (tx) => {
        await sql`set local statement_timeout = 50`.execute(kysely(tx));
        await sql`select pg_sleep(5)`.execute(kysely(tx));
      }),
    );
    expect(error).toMatchObject({ code: '57014' });
    expect(problemOf(error)).toMatchObject({ status: 503, error_code: 8001, retryable: true, detail: GENERIC_503 });
  });

  it('no pooled connection free in time ("timeout exceeded when trying to connect"), through Kysely and through the ORM', async () => {
    // One connection, and the service's own connection timeout (a shorter one could fail the holder's own connect on a busy machine).
    const orm = await MikroORM.init(ormOptions(svc.databaseUrl, { poolMax: 1 }));
    // The pool's only connection stays in this transaction until the test lets it go.
    const released = Promise.withResolvers<void>();
    const taken = Promise.withResolvers<void>();
    const holding = orm.em.fork().transactional(async (tx) => {
      await sql`select 1`.execute(kysely(tx));
      taken.resolve();
      await released.promise;
    });
    try {
      // If the holder itself fails, fail here instead of waiting for it forever.
      const ended = holding.then(() => 'ended' as const, () => 'failed' as const);
      expect(await Promise.race([taken.promise.then(() => 'taken' as const), ended])).toBe('taken');
      const viaKysely = await failureOf(() => sql`select 1`.execute(kysely(orm.em.fork())));
      const viaOrm = await failureOf(() => orm.em.fork().count(User));
      for (const error of [viaKysely, viaOrm]) {
        expect(String(error)).toMatch(/timeout exceeded when trying to connect/);
        expect(problemOf(error)).toMatchObject({ status: 503, error_code: 8001, retryable: true, detail: GENERIC_503 });
      }
    } finally {
      released.resolve();
      await holding;
      await orm.close(true);
    }
  });

  it('a database nobody listens on, over TCP (ECONNREFUSED) or a Unix-domain socket (no socket file: ENOENT), through Kysely and through the ORM', async () => {
    const port = String(await freePort());
    const socket = new URL(svc.databaseUrl);
    // The embedded test database is reached through its socket directory.
    expect(decodeURIComponent(socket.hostname)).toMatch(/^\//);
    socket.port = port;
    const tcp = new URL(socket);
    tcp.hostname = '127.0.0.1';
    for (const [url, code] of [[tcp, 'ECONNREFUSED'], [socket, 'ENOENT']] as const) {
      const orm = await MikroORM.init(ormOptions(url.toString()));
      try {
        const viaKysely = await failureOf(() => sql`select 1`.execute(kysely(orm.em.fork())));
        const viaOrm = await failureOf(() => orm.em.fork().count(User));
        for (const error of [viaKysely, viaOrm]) {
          expect(String(error)).toContain(code);
          expect(problemOf(error)).toMatchObject({ status: 503, error_code: 8001, retryable: true, detail: GENERIC_503 });
        }
      } finally {
        await orm.close(true);
      }
    }
  });

  it('a missing file is not a lost connection: ENOENT from anything but a connect is 500/8000', () => {
    const missing = Object.assign(new Error("ENOENT: no such file or directory, open '/nope'"), { code: 'ENOENT', syscall: 'open' });
    expect(toApiError(missing)).toMatchObject({ errorCode: 8000, status: 500 });
  });

  it('over HTTP: a request whose connection is terminated while it waits answers 503/8001 with the generic detail', async () => {
    // A service of its own: its pool may hand out the terminated connection once more before it notices.
    const own = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
    const user = await createUser(own);
    const admin = new pg.Client({ connectionString: own.databaseUrl });
    await admin.connect();
    try {
      // The session lookup queues behind this lock, so the request is mid-flight when its backend goes.
      await admin.query('begin');
      await admin.query('lock table sessions in access exclusive mode');
      const pending = own.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { ...user.headers, ...PROBLEM } });
      let killed = 0;
      const deadline = Date.now() + 15_000;
      while (killed === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        const res = await admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
        );
        killed = res.rowCount ?? 0;
      }
      expect(killed).toBeGreaterThan(0);
      const res = await pending;
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ status: 503, error_code: 8001, error_category: 'internal', retryable: true, detail: GENERIC_503 });
      expect(res.body).not.toMatch(/terminat|administrator|57P01/i);
      await admin.query('rollback');
      // The pool recovers: the same user is served again (a request that drew the dead connection before
      // the pool dropped it would have been answered 503/8001, retryable).
      await expect.poll(async () => (await own.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers })).statusCode, { timeout: 5000 }).toBe(200);
    } finally {
      await admin.end();
      await own.close();
    }
  });
});

describe('other database errors → 500/8002 with the generic detail', () => {
  it.each([
    ['division by zero (22012) through Kysely', () => sql`select 1 / 0`.execute(kysely(svc.db.orm.em.fork())), 'division by zero'],
    ['a bad cast (22P02) through Kysely', () => sql`select 'not a number'::int`.execute(kysely(svc.db.orm.em.fork())), 'invalid input syntax'],
    ['division by zero (22012) through the ORM', () => svc.db.orm.em.fork().getConnection().execute('select 1 / 0'), 'division by zero'],
    ['an unknown table (42P01) through the ORM', () => svc.db.orm.em.fork().getConnection().execute('select * from no_such_table'), 'no_such_table'],
  ] as const)('%s', async (_name, run, realText) => {
    const error = await failureOf(run);
    expect(String(error)).toContain(realText);
    expect(toApiError(error)).toMatchObject({ errorCode: 8002, status: 500 });
    const problem = problemOf(error);
    expect(problem).toMatchObject({ status: 500, error_code: 8002, error_category: 'internal', retryable: false, retry_after: null, detail: GENERIC_STORAGE });
    expect(JSON.stringify(problem)).not.toContain(realText);
  });

  it('over HTTP: a query the database refuses answers 500/8002 with the generic detail, in both formats', async () => {
    // A database of its own, whose sessions table this test breaks.
    const own = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
    try {
      const user = await createUser(own);
      await sql`alter table sessions rename to sessions_moved_away`.execute(kysely(own.db.orm.em.fork()));
      const problem = await own.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { ...user.headers, ...PROBLEM } });
      expect(problem.statusCode).toBe(500);
      expect(problem.json()).toMatchObject({ status: 500, error_code: 8002, error_category: 'internal', retryable: false, detail: GENERIC_STORAGE });
      const envelope = await own.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers });
      expect(envelope.statusCode).toBe(500);
      expect(envelope.json()).toMatchObject({ success: false, error: GENERIC_STORAGE, error_detail: { error_code: 8002 } });
      for (const body of [problem.body, envelope.body]) expect(body).not.toMatch(/sessions|does not exist|42P01/);
    } finally {
      await own.close();
    }
  });
});

describe('anything else → 500/8000 with the generic detail; the real text never leaks (SERVICE-SPEC §7.5.3)', () => {
  const SECRET = 'internal detail: /srv/secret.key mismatch';

  it('toApiError keeps the thrown error as the cause (for the log) and answers the generic detail', () => {
    for (const thrown of [new Error(SECRET), new TypeError(SECRET), SECRET, { message: SECRET }, null, undefined]) {
      const mapped = toApiError(thrown);
      expect(mapped).toMatchObject({ errorCode: 8000, status: 500 });
      if (thrown instanceof Error) expect(mapped.cause).toBe(thrown);
      const problem = problemOf(thrown);
      expect(problem).toMatchObject({ status: 500, error_code: 8000, error_category: 'internal', retryable: false, retry_after: null, detail: GENERIC_500 });
      expect(JSON.stringify(problem)).not.toContain('secret');
    }
  });

  describe('over HTTP (a clock that throws once armed)', () => {
    let armed = false;
    const clock: Clock = {
      now: () => {
        if (armed) throw new Error(SECRET);
        return new Date();
      },
    };
    let own: TestService;
    let user: TestUser;
    beforeAll(async () => {
      own = await startTestService({ clock, env: { RATE_LIMITS_ENABLED: 'false' } });
      user = await createUser(own);
    });
    afterAll(() => own.close());

    const failing = async (request: InjectOptions) => {
      armed = true;
      try {
        return await own.app.inject(request);
      } finally {
        armed = false;
      }
    };

    it('REST answers 500/8000 with the generic detail, in both formats', async () => {
      const problem = await failing({ method: 'GET', url: '/api/v1/auth/me', headers: { ...user.headers, ...PROBLEM } });
      expect(problem.statusCode).toBe(500);
      expect(problem.headers['content-type']).toBe('application/problem+json');
      expect(problem.json()).toMatchObject({ status: 500, error_code: 8000, error_category: 'internal', retryable: false, retry_after: null, detail: GENERIC_500 });
      const envelope = await failing({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers });
      expect(envelope.statusCode).toBe(500);
      expect(envelope.json()).toMatchObject({ data: null, success: false, error: GENERIC_500, error_detail: { error_code: 8000, detail: GENERIC_500 } });
      for (const res of [problem, envelope]) expect(res.body).not.toContain('secret');
    });

    it('tRPC answers 500 with the generic ProblemDetail and message', async () => {
      const res = await failing({ method: 'GET', url: '/api/trpc/auth.me', headers: user.headers });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toMatchObject({
        error: { message: GENERIC_500, data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500, problem: { status: 500, error_code: 8000, detail: GENERIC_500 } } },
      });
      expect(res.body).not.toContain('secret');
    });

    it('the same request succeeds once the clock works again (the failure was the throw, nothing else)', async () => {
      expect((await own.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers })).statusCode).toBe(200);
    });
  });
});

describe('wrapped causes', () => {
  it('an ApiError passes through unchanged, also inside a TRPCError', () => {
    const original = ApiError.versionConflict();
    expect(toApiError(original)).toBe(original);
    expect(toApiError(new TRPCError({ code: 'CONFLICT', cause: original }))).toBe(original);
  });

  it('a TRPCError whose cause is a driver error maps like the driver error', async () => {
    const unique = await rawUniqueViolation();
    expect(toApiError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: unique }))).toMatchObject({ errorCode: 4001, detail: 'username is already taken' });
    const storage = await failureOf(() => sql`select 1 / 0`.execute(kysely(svc.db.orm.em.fork())));
    expect(toApiError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: storage }))).toMatchObject({ errorCode: 8002, detail: GENERIC_STORAGE });
  });

  it('a driver error a few causes deep is found (Error → Error → DatabaseError)', async () => {
    const unique = await rawUniqueViolation();
    const chain = new Error('store failed', { cause: new Error('insert failed', { cause: unique }) });
    expect(toApiError(chain)).toMatchObject({ errorCode: 4001, detail: 'username is already taken' });
    expect(toApiError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: chain }))).toMatchObject({ errorCode: 4001 });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(toApiError(new Error('query failed', { cause: refused }))).toMatchObject({ errorCode: 8001, status: 503 });
  });

  it('a TRPCError with an unknown cause is 500/8000 with the generic detail', () => {
    const mapped = toApiError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'boom: secret', cause: new Error('secret') }));
    expect(mapped).toMatchObject({ errorCode: 8000, status: 500, detail: GENERIC_500 });
  });

  it('zod: an input failure is 400/2001 naming the field, an output failure is our bug (500/8000)', () => {
    const zodError = z.object({ password: z.string().min(12) }).safeParse({ password: 'short' }).error;
    expect(zodError).toBeInstanceOf(z.ZodError);
    expect(toApiError(zodError)).toMatchObject({ errorCode: 2001, status: 400, detail: 'password: too short (min 12)' });
    expect(toApiError(new TRPCError({ code: 'BAD_REQUEST', cause: zodError }))).toMatchObject({ errorCode: 2001, detail: 'password: too short (min 12)' });
    expect(toApiError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: zodError }))).toMatchObject({ errorCode: 8000, status: 500, detail: GENERIC_500 });
  });
});

describe('body-parser and routing errors of tRPC', () => {
  it.each([
    ['PARSE_ERROR', 400, 2001, 'Unexpected token'],
    ['BAD_REQUEST', 400, 2001, 'Unexpected token'],
    ['PAYLOAD_TOO_LARGE', 400, 2001, 'request body too large (max 1 MiB)'],
    ['UNSUPPORTED_MEDIA_TYPE', 400, 2001, 'unsupported content type; send application/json'],
    ['NOT_FOUND', 404, 3002, 'no such endpoint'],
    ['METHOD_NOT_SUPPORTED', 405, 2001, 'method not allowed'],
  ] as const)('TRPCError %s → %i/%i', (code, status, errorCode, detail) => {
    expect(toApiError(new TRPCError({ code, message: 'Unexpected token' }))).toMatchObject({ status, errorCode, detail });
  });

  const trpc = (method: 'GET' | 'POST', url: string, payload?: string, headers: Record<string, string> = {}) =>
    svc.app.inject({ method, url: `/api/trpc/${url}`, headers: { 'content-type': 'application/json', ...headers }, ...(payload === undefined ? {} : { payload }) });

  it('over HTTP: malformed JSON input is 400/2001, as a body and as a query parameter, batched or not', async () => {
    const user = await createUser(svc);
    for (const res of [
      await trpc('POST', 'auth.login', '{"username":'),
      await trpc('POST', 'auth.login?batch=1', '{"0":'),
      await trpc('GET', 'users.get?input=%7Bbad', undefined, user.headers),
    ]) {
      expect(res.statusCode).toBe(400);
      const [body] = [res.json()].flat();
      expect(body).toMatchObject({ error: { data: { httpStatus: 400, problem: { status: 400, error_code: 2001, error_category: 'validation' } } } });
    }
  });

  it('over HTTP: an unknown procedure is 404/3002; a mutation called by GET is 405/2001', async () => {
    expect((await trpc('GET', 'nope.nothing')).json()).toMatchObject({ error: { data: { httpStatus: 404, problem: { error_code: 3002 } } } });
    const res = await trpc('GET', 'auth.logout');
    expect(res.statusCode).toBe(405);
    expect(res.json()).toMatchObject({ error: { data: { httpStatus: 405, problem: { status: 405, error_code: 2001 } } } });
  });
});
