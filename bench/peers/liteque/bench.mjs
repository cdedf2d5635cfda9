// bench/peers/liteque/bench.mjs: one measurement of liteque for bench/peers/run.
//
//   node bench/peers/liteque/bench.mjs WORKLOAD JOBS DB
//
// WORKLOAD w1 (a Runner with concurrency 1) or w2 (concurrency 4, liteque's
// own concurrency, in one process); it has no batch dequeue and no bulk
// enqueue.  Enqueues JOBS no-op jobs one by one (timed), then runs
// runUntilEmpty (timed) and prints
//   RESULT enqueue_s=<s> process_s=<s> done=<jobs done>
// liteque opens its database in WAL mode with synchronous=NORMAL, hard-coded.
import { buildDBClient, Runner, SqliteQueue } from "liteque";

const [workload, jobsArg, dbPath] = process.argv.slice(2);
const jobs = Number(jobsArg);
if (!["w1", "w2"].includes(workload) || !(jobs >= 1) || !dbPath) {
  console.error("usage: bench.mjs w1|w2 JOBS DB");
  process.exit(2);
}
const db = buildDBClient(dbPath, { runMigrations: true });
const queue = new SqliteQueue("noop", db, {
  defaultJobArgs: { numRetries: 0 }, keepFailedJobs: true,
});

let t0 = performance.now();
for (let i = 0; i < jobs; i++) await queue.enqueue({ i });
const enqueueS = (performance.now() - t0) / 1000;

let done = 0;
const runner = new Runner(queue, { run: async () => { done++; } },
  { concurrency: workload === "w2" ? 4 : 1, pollIntervalMs: 5, timeoutSecs: 600 });
t0 = performance.now();
await runner.runUntilEmpty();
const processS = (performance.now() - t0) / 1000;
const stats = await queue.stats();
if (done !== jobs || stats.pending + stats.pending_retry + stats.running + stats.failed !== 0) {
  throw new Error(`${done} of ${jobs} jobs run, left: ${JSON.stringify(stats)}`);
}
console.log(`RESULT enqueue_s=${enqueueS.toFixed(6)} process_s=${processS.toFixed(6)} done=${done}`);
// The runner leaves one timeout timer per job behind: exit without waiting.
process.exit(0);
