// bench/peers/plainjob/bench.mjs: one measurement of plainjob for bench/peers/run.
//
//   node bench/peers/plainjob/bench.mjs WORKLOAD JOBS DB
//
// WORKLOAD w1 (one worker) or w2 (four workers: four processes, each with
// its own connection, as plainjob's README shows for parallel work; it has
// no concurrency option and no batch fetch).  Enqueues JOBS no-op jobs with
// addMany in chunks of 1000 (timed), then runs them (timed from the start of
// the workers to the last one stopping) and prints
//   RESULT enqueue_s=<s> process_s=<s> done=<jobs done>
// plainjob opens its database in WAL mode with synchronous=NORMAL, hard-coded.
import Database from "better-sqlite3";
import { better, defineQueue, defineWorker, JobStatus } from "plainjob";
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

const [workload, jobsArg, dbPath, role] = process.argv.slice(2);
const jobs = Number(jobsArg);
const quiet = { error: console.error, warn() {}, info() {}, debug() {} };

function openQueue() {
  const connection = better(new Database(dbPath));
  return defineQueue({ connection, logger: quiet });
}

if (role === "worker") {
  // A worker process: wait for "go", run until nothing is pending, exit.
  const queue = openQueue();
  let done = 0;
  const worker = defineWorker("noop", () => { done++; },
    { queue, logger: quiet, pollIntervall: 5 });
  process.on("message", (m) => {
    if (m !== "go") return;
    const check = setInterval(() => {
      if (queue.countJobs({ type: "noop", status: JobStatus.Pending }) === 0) {
        clearInterval(check);
        worker.stop().then(() => {
          queue.close();
          process.send({ done }, () => process.exit(0));
        });
      }
    }, 5);
    worker.start();
  });
  process.send("ready");
} else {
  if (!["w1", "w2"].includes(workload) || !(jobs >= 1) || !dbPath) {
    console.error("usage: bench.mjs w1|w2 JOBS DB");
    process.exit(2);
  }
  const queue = openQueue();
  const payloads = [];
  let t0 = performance.now();
  for (let base = 0; base < jobs; base += 1000) {
    payloads.length = 0;
    for (let i = base; i < Math.min(jobs, base + 1000); i++) payloads.push({ i });
    queue.addMany("noop", payloads);
  }
  const enqueueS = (performance.now() - t0) / 1000;

  const n = workload === "w2" ? 4 : 1;
  const self = fileURLToPath(import.meta.url);
  const children = [];
  for (let i = 0; i < n; i++) {
    children.push(fork(self, [workload, jobsArg, dbPath, "worker"]));
  }
  await Promise.all(children.map((c) => new Promise((res) => c.once("message", res))));
  const results = children.map((c) => new Promise((res, rej) => {
    c.once("message", (m) => res(m.done));
    c.once("exit", (code) => { if (code !== 0) rej(new Error("worker exited " + code)); });
  }));
  t0 = performance.now();
  for (const c of children) c.send("go");
  const counts = await Promise.all(results);
  const processS = (performance.now() - t0) / 1000;
  const done = queue.countJobs({ type: "noop", status: JobStatus.Done });
  queue.close();
  if (done !== jobs) throw new Error(`${done} of ${jobs} jobs done (workers: ${counts})`);
  console.log(`RESULT enqueue_s=${enqueueS.toFixed(6)} process_s=${processS.toFixed(6)} done=${done}`);
}
