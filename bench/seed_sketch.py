#!/usr/bin/env python3
"""bench/seed_sketch.py: the seed's sketch in Python, for the benchmark.

The design text the project started from (docs/contract/seed.txt) describes
eight functions over one SQLite file, each taking the path and opening its
own connection: init_db, enqueue, state, claim, renew, complete, release
and claim_many.  This is that sketch, written as the seed describes it and
with nothing added: Python's sqlite3 module with its defaults (rollback
journal, synchronous FULL, a 10 s busy timeout), one connection per call,
claim's read and update in one BEGIN IMMEDIATE transaction.  bench/bench.lua
runs it in the same run as lease's path functions, which it compares them
with.  Standard library only.

Usage:
  seed_sketch.py init PATH
  seed_sketch.py cycle PATH PREFIX N    N x (enqueue, claim, complete) of ids PREFIX0..
  seed_sketch.py renew PATH PREFIX N    enqueue and claim PREFIXjob, then N renews
  seed_sketch.py serve FIFO             read such commands, one a line with tab-
                                        separated words, from stdin until its end
Timed commands print "<wall seconds> <CPU seconds>" of the timed loop only
(not the interpreter's start-up); serve writes that line to FIFO (a named
pipe the caller reads) after each command, so one interpreter serves a
whole benchmark run.
"""
import sqlite3
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

SCHEMA = ("CREATE TABLE IF NOT EXISTS jobs(id TEXT PRIMARY KEY, owner TEXT, "
          "until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, "
          "result TEXT, done INTEGER NOT NULL DEFAULT 0)")


def _connect(path):
    """One connection for one call; transactions are explicit."""
    return closing(sqlite3.connect(path, timeout=10, isolation_level=None))


def init_db(path):
    """Step 1: create the jobs table, idempotently."""
    with _connect(path) as c:
        c.execute(SCHEMA)


def enqueue(path, job_id):
    """Step 2: insert a new id in its default state: True; an existing one: False."""
    with _connect(path) as c:
        return c.execute("INSERT OR IGNORE INTO jobs(id) VALUES (?)", (job_id,)).rowcount == 1


def state(path, job_id):
    """Step 3: the row as a dict, or None."""
    with _connect(path) as c:
        row = c.execute("SELECT id, owner, until, fence, result, done FROM jobs WHERE id=?",
                        (job_id,)).fetchone()
    keys = ("id", "owner", "until", "fence", "result", "done")
    return dict(zip(keys, row)) if row else None


def claim(path, job_id, owner, now, ttl):
    """Step 4: take an expired (until <= now), not done job: the new fence, else None."""
    if ttl <= 0:
        raise ValueError("ttl must be > 0")
    with _connect(path) as c:
        c.execute("BEGIN IMMEDIATE")
        try:
            row = c.execute("SELECT until, done, fence FROM jobs WHERE id=?", (job_id,)).fetchone()
            if row is None or row[1] or row[0] > now:
                c.execute("ROLLBACK")
                return None
            c.execute("UPDATE jobs SET owner=?, until=?, fence=fence+1 WHERE id=?",
                      (owner, now + ttl, job_id))
            c.execute("COMMIT")
            return row[2] + 1
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise


def renew(path, job_id, owner, fence, now, ttl):
    """Step 5: extend the current generation's live lease."""
    if ttl <= 0:
        raise ValueError("ttl must be > 0")
    with _connect(path) as c:
        return c.execute("UPDATE jobs SET until=? WHERE id=? AND owner=? AND fence=? "
                         "AND done=0 AND until>?",
                         (now + ttl, job_id, owner, fence, now)).rowcount == 1


def complete(path, job_id, owner, fence, now, result):
    """Step 6: store the result of the current generation's live lease."""
    with _connect(path) as c:
        return c.execute("UPDATE jobs SET result=?, done=1 WHERE id=? AND owner=? AND fence=? "
                         "AND done=0 AND until>?",
                         (result, job_id, owner, fence, now)).rowcount == 1


def release(path, job_id, owner, fence):
    """Step 7: give the lease back, keeping the fence."""
    with _connect(path) as c:
        return c.execute("UPDATE jobs SET owner=NULL, until=0 WHERE id=? AND owner=? AND fence=? "
                         "AND done=0", (job_id, owner, fence)).rowcount == 1


def claim_many(path, job_id, owners, now, ttl):
    """Step 8: claim for every owner at once; the results in input order."""
    with ThreadPoolExecutor(max_workers=len(owners)) as pool:
        return list(pool.map(lambda o: claim(path, job_id, o, now, ttl), owners))


OWNER, NOW, TTL, RESULT = "worker-1", 1, 1e9, "ok"


def _timed(loop):
    """Run loop(); return its wall and CPU seconds as one line."""
    c0, t0 = time.process_time(), time.perf_counter()
    loop()
    return "%.9f %.9f" % (time.perf_counter() - t0, time.process_time() - c0)


def run(cmd, path, prefix, n):
    """One timed command ("cycle" or "renew"): its result line."""
    if cmd == "cycle":
        ids = ["%s%d" % (prefix, i) for i in range(n)]

        def loop():
            for job_id in ids:
                enqueue(path, job_id)
                fence = claim(path, job_id, OWNER, NOW, TTL)
                if not complete(path, job_id, OWNER, fence, NOW, RESULT):
                    raise SystemExit("seed_sketch: cycle refused")
    else:
        job_id = prefix + "job"
        enqueue(path, job_id)
        fence = claim(path, job_id, OWNER, NOW, TTL)

        def loop():
            for i in range(1, n + 1):
                if not renew(path, job_id, OWNER, fence, NOW + i, TTL):
                    raise SystemExit("seed_sketch: renew refused")
    return _timed(loop)


def main(argv):
    if len(argv) == 3 and argv[1] == "init":
        init_db(argv[2])
        return 0
    if len(argv) == 3 and argv[1] == "serve":
        with open(argv[2], "w") as out:
            for line in sys.stdin:
                cmd, path, prefix, n = line.rstrip("\n").split("\t")
                out.write(run(cmd, path, prefix, int(n)) + "\n")
                out.flush()
        return 0
    if len(argv) != 5 or argv[1] not in ("cycle", "renew"):
        sys.stderr.write(__doc__)
        return 2
    print(run(argv[1], argv[2], argv[3], int(argv[4])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
