// Service status: liveness, readiness (the database) and which optional subsystems this deployment serves.
import { useQuery } from '@tanstack/preact-query';
import { queries } from '../api/queries.ts';
import { Badge, Failure, Loading, PageTitle } from '../components/ui.tsx';
import { label } from '../lib/format.ts';

export function StatusPage() {
  const health = useQuery(queries.health());
  const ready = useQuery(queries.readiness());
  const caps = useQuery(queries.capabilities());
  return (
    <section>
      <PageTitle title="Status">Status</PageTitle>
      <div class="grid">
        <article class="card" aria-labelledby="liveness">
          <h2 id="liveness">Liveness</h2>
          {health.isPending ? <Loading what="liveness" /> : null}
          <Failure error={health.error} />
          {health.data ? (
            <p>
              <Badge kind="ok">Up</Badge> for {Math.round(health.data.uptime_seconds)} s
            </p>
          ) : null}
        </article>
        <article class="card" aria-labelledby="readiness">
          <h2 id="readiness">Readiness</h2>
          {ready.isPending ? <Loading what="readiness" /> : null}
          {ready.error ? <Badge kind="bad">Not ready</Badge> : null}
          <Failure error={ready.error} />
          {ready.data ? (
            <p>
              <Badge kind="ok">Ready</Badge> The database answers.
            </p>
          ) : null}
        </article>
        <article class="card" aria-labelledby="capabilities">
          <h2 id="capabilities">Capabilities</h2>
          {caps.isPending ? <Loading what="capabilities" /> : null}
          <Failure error={caps.error} />
          {caps.data ? (
            <dl class="facts">
              {Object.entries(caps.data).map(([name, on]) => (
                <div key={name}>
                  <dt>{label(name)}</dt>
                  <dd>{on ? <Badge kind="ok">Yes</Badge> : <Badge kind="off">No</Badge>}</dd>
                </div>
              ))}
            </dl>
          ) : null}
        </article>
      </div>
      <p>
        <button
          type="button"
          onClick={() => {
            void health.refetch();
            void ready.refetch();
            void caps.refetch();
          }}
        >
          Check again
        </button>
      </p>
    </section>
  );
}
