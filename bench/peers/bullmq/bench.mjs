// bench/peers/bullmq/bench.mjs: one measurement of BullMQ for bench/peers/run.
//
//   node bench/peers/bullmq/bench.mjs WORKLOAD JOBS REDIS_PORT QUEUE
//
// WORKLOAD w1 (a Worker with concurrency 1) or w2 (concurrency 4, BullMQ's
// own concurrency, in one process); open-source BullMQ has no batch fetch.
// Redis on 127.0.0.1:REDIS_PORT; QUEUE a fresh queue name.  Enqueues JOBS
// no-op jobs with addBulk in chunks of 1000 (timed), then runs a Worker
// until every job completed (timed from worker.run() to the last
// "completed" event) and prints
//   RESULT enqueue_s=<s> process_s=<s> done=<jobs done>
// and removes the queue from Redis.  Durability is the Redis server's.
//
// WORKLOAD lat: one Worker (concurrency 1) waiting on an empty queue; JOBS
// jobs added one at a time, each once the worker is idle again (10 ms
// after the previous job's handler started), and the time from just before
// `add` to the handler's start measured for each; prints
//   RESULT jobs=<n> p50_ms=<ms> p99_ms=<ms> max_ms=<ms> done=<n>
import { Queue, Worker } from "bullmq";
import { percentile } from "../latency.mjs";

const [workload, jobsArg, port, name] = process.argv.slice(2);
const jobs = Number(jobsArg);
if (!["w1", "w2", "lat"].includes(workload) || !(jobs >= 1) || !port || !name) {
  console.error("usage: bench.mjs w1|w2|lat JOBS REDIS_PORT QUEUE");
  process.exit(2);
}
const connection = { host: "127.0.0.1", port: Number(port), maxRetriesPerRequest: null };
const queue = new Queue(name, { connection });
await queue.waitUntilReady();

if (workload === "lat") {
  let started;
  const worker = new Worker(name, async () => { started(performance.now()); }, { connection, concurrency: 1 });
  await worker.waitUntilReady();
  await new Promise((res) => setTimeout(res, 200));
  const lat = [];
  for (let i = 0; i < jobs; i++) {
    const start = new Promise((res) => { started = res; });
    const t = performance.now();
    await queue.add("noop", { i });
    lat.push((await start) - t);
    await new Promise((res) => setTimeout(res, 10));
  }
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  console.log(`RESULT jobs=${lat.length} p50_ms=${percentile(lat, 50).toFixed(3)} p99_ms=${percentile(lat, 99).toFixed(3)} max_ms=${percentile(lat, 100).toFixed(3)} done=${lat.length}`);
  process.exit(0);
}

let t0 = performance.now();
for (let base = 0; base < jobs; base += 1000) {
  const batch = [];
  for (let i = base; i < Math.min(jobs, base + 1000); i++) batch.push({ name: "noop", data: { i } });
  await queue.addBulk(batch);
}
const enqueueS = (performance.now() - t0) / 1000;

let done = 0;
let finish;
const finished = new Promise((res) => { finish = res; });
const worker = new Worker(name, async () => {}, {
  connection, concurrency: workload === "w2" ? 4 : 1, autorun: false,
});
worker.on("completed", () => { if (++done === jobs) finish(); });
worker.on("failed", (job, err) => { console.error("failed:", err); process.exit(1); });
await worker.waitUntilReady();
t0 = performance.now();
worker.run();
await finished;
const processS = (performance.now() - t0) / 1000;
await worker.close();
const counts = await queue.getJobCounts("completed", "wait", "active", "failed");
if (counts.completed !== jobs) throw new Error(`counts ${JSON.stringify(counts)}`);
await queue.obliterate({ force: true });
await queue.close();
console.log(`RESULT enqueue_s=${enqueueS.toFixed(6)} process_s=${processS.toFixed(6)} done=${done}`);
