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
//
// WORKLOAD lat: a runner (concurrency 1, graphile-worker's LISTEN/NOTIFY
// wake-up, pollInterval at its default) waiting on an empty queue; JOBS jobs
// added one at a time with addJob, each once the worker is idle again (10 ms
// after the previous job's handler started), and the time from just before
// `addJob` to the handler's start measured for each; prints
//   RESULT jobs=<n> p50_ms=<ms> p99_ms=<ms> max_ms=<ms> done=<n>
import { run, runMigrations, makeWorkerUtils, Logger } from "graphile-worker";
import { percentile } from "../latency.mjs";

const [workload, jobsArg, connectionString] = process.argv.slice(2);
const jobs = Number(jobsArg);
if (!["w1", "w2", "w3", "lat"].includes(workload) || !(jobs >= 1) || !connectionString) {
  console.error("usage: bench.mjs w1|w2|w3|lat JOBS CONNECTION_STRING");
  process.exit(2);
}
const quiet = { logger: new Logger(() => () => {}) };
await runMigrations({ connectionString, ...quiet });
const utils = await makeWorkerUtils({ connectionString, ...quiet });

if (workload === "lat") {
  let started;
  const runner = await run({
    connectionString, concurrency: 1, noHandleSignals: true,
    taskList: { noop: async () => { started(performance.now()); } },
    ...quiet,
  });
  await new Promise((res) => setTimeout(res, 200));
  const lat = [];
  for (let i = 0; i < jobs; i++) {
    const start = new Promise((res) => { started = res; });
    const t = performance.now();
    await utils.addJob("noop", { i });
    lat.push((await start) - t);
    await new Promise((res) => setTimeout(res, 10));
  }
  await runner.stop();
  await utils.release();
  console.log(`RESULT jobs=${lat.length} p50_ms=${percentile(lat, 50).toFixed(3)} p99_ms=${percentile(lat, 99).toFixed(3)} max_ms=${percentile(lat, 100).toFixed(3)} done=${lat.length}`);
  process.exit(0);
}

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
