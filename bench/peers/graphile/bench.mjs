// bench/peers/graphile/bench.mjs: one measurement of graphile-worker for bench/peers/run.
//
//   node bench/peers/graphile/bench.mjs WORKLOAD JOBS CONNECTION_STRING
//
// WORKLOAD w1 (concurrency 1), w2 (concurrency 4, graphile-worker's own
// concurrency, in one process) or w3 (concurrency 1, jobs fetched 100 at a
// time into its local queue, completions batched: localQueue.size = 100,
// completeJobBatchDelay = 0).  CONNECTION_STRING names a fresh database.
// Installs the schema first (not timed), enqueues JOBS no-op jobs with
// addJobs in chunks of 1000 (timed), then runs a worker until every job's
// row is gone (timed from the start of the worker) and prints
//   RESULT enqueue_s=<s> process_s=<s> done=<jobs done>
// Durability is the PostgreSQL server's (fsync, synchronous_commit).
import { run, runMigrations, makeWorkerUtils, Logger } from "graphile-worker";

const [workload, jobsArg, connectionString] = process.argv.slice(2);
const jobs = Number(jobsArg);
if (!["w1", "w2", "w3"].includes(workload) || !(jobs >= 1) || !connectionString) {
  console.error("usage: bench.mjs w1|w2|w3 JOBS CONNECTION_STRING");
  process.exit(2);
}
const quiet = { logger: new Logger(() => () => {}) };
await runMigrations({ connectionString, ...quiet });
const utils = await makeWorkerUtils({ connectionString, ...quiet });

let t0 = performance.now();
for (let base = 0; base < jobs; base += 1000) {
  const batch = [];
  for (let i = base; i < Math.min(jobs, base + 1000); i++) batch.push({ identifier: "noop", payload: { i } });
  await utils.addJobs(batch);
}
const enqueueS = (performance.now() - t0) / 1000;

let done = 0;
let finish;
const finished = new Promise((res) => { finish = res; });
const preset = {
  worker: workload === "w3"
    ? { localQueue: { size: 100 }, completeJobBatchDelay: 0 }
    : {},
};
t0 = performance.now();
const runner = await run({
  connectionString,
  concurrency: workload === "w2" ? 4 : 1,
  noHandleSignals: true,
  pollInterval: 1000,
  preset,
  taskList: { noop: async () => { if (++done === jobs) finish(); } },
  ...quiet,
});
await finished;
// The last handler has returned; its job is done when its row is deleted
// (completions are written after the handler returns, batched in w3).
const left = () => utils.withPgClient(
  (c) => c.query("select count(*)::int as n from graphile_worker.jobs")).then((r) => r.rows[0].n);
const deadline = performance.now() + 60000;
while (await left() !== 0) {
  if (performance.now() > deadline) throw new Error(`${await left()} jobs left after 60 s`);
  await new Promise((res) => setTimeout(res, 1));
}
const processS = (performance.now() - t0) / 1000;
await runner.stop();
await utils.release();
console.log(`RESULT enqueue_s=${enqueueS.toFixed(6)} process_s=${processS.toFixed(6)} done=${done}`);
