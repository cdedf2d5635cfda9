// bench/peers/latency.mjs: the percentile the peers' latency workloads
// report, by the nearest-rank method (the smallest sample with at least p%
// of the samples at or below it), as bench/peers/run.lua computes lease's.
export function percentile(samples, p) {
  const x = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * x.length));
  return x[rank - 1];
}
