/*
** bench/layout_sketch.c: what the SQLite floor's workloads cost when the
** job queue's columns live in jobs itself, against the contract's table
** alone (bench/bench.lua's floor), in one run.  A sketch of a storage
** layout, not the engine: raw SQLite prepared statements in C, the same
** pragmas (WAL, synchronous NORMAL), no events, no dependencies, no checks
** for other clients' triggers.  docs/benchmarks.md ("The engine against
** raw SQLite") says what it answers.
**
** Layouts:
**   floor   the contract's jobs(id, owner, until, fence, result, done) and
**           an index of the jobs not done, as lease_bench.c's floor;
**   merged  the same table with the queue's columns added (queue,
**           priority, run_at, base_fence, max_attempts, payload, state,
**           finished_at, due_at, timeout, key) and the queue's indexes on
**           it: the ready jobs (queue, priority, due_at) where state = 0
**           AND done = 0, the ended ones by coalesce(finished_at, until),
**           the unique keys.  done is part of the ready index's predicate,
**           so a done another client stores takes the job out of it with
**           no trigger; a completion writes done and finished_at, and the
**           job's row alone.
**
** Workloads, each job a fresh id: batches of 1000 (enqueue_many, a
** claim_next of 1000 in one UPDATE ... RETURNING, the completes of the
** batch in one transaction), and the single cycle (enqueue, claim_next of
** one, complete: three transactions).  Repetitions alternate the layouts;
** the ratios are taken per repetition, then their median printed.
**
** Build and run (needs libsqlite3-dev; not part of the build or tests):
**   cc -O2 -o /tmp/layout_sketch bench/layout_sketch.c -lsqlite3
**   /tmp/layout_sketch DIR [REPS]    (DIR: a directory for the files)
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { FLOOR, MERGED, LAYOUTS };
enum { ENQUEUE_MANY, CLAIM_N, COMPLETE_MANY, CYCLE, WORKLOADS };
static const char *const layout_names[LAYOUTS] = {"floor", "merged"};
static const char *const workload_names[WORKLOADS] = {
  "enqueue_many (us/job)", "claim_next(n) (us/job)", "complete_many (us/job)",
  "cycle, 3 transactions (us)"};

#define BATCH 1000
#define ROUNDS 20
#define CYCLES 2000
#define MAX_REPS 25

static const char *const schema[LAYOUTS] = {
  "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0,"
  " fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0);"
  "CREATE INDEX lease_jobs_pending ON jobs(done) WHERE done = 0;",
  "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0,"
  " fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0,"
  " queue TEXT NOT NULL DEFAULT 'default', priority INTEGER NOT NULL DEFAULT 0, run_at REAL,"
  " base_fence INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL DEFAULT 25,"
  " payload BLOB, state INTEGER NOT NULL DEFAULT 0, finished_at REAL,"
  " due_at REAL NOT NULL DEFAULT 0, timeout REAL, key TEXT);"
  "CREATE INDEX lease_jobs_due ON jobs(queue, priority, due_at) WHERE state = 0 AND done = 0;"
  "CREATE INDEX lease_jobs_ended ON jobs(coalesce(finished_at, until))"
  " WHERE state <> 0 OR done <> 0;"
  "CREATE UNIQUE INDEX lease_jobs_key ON jobs(queue, key)"
  " WHERE key IS NOT NULL AND state = 0 AND done = 0;",
};
static const char *const sql_enqueue[LAYOUTS] = {
  "INSERT OR IGNORE INTO jobs(id) VALUES (?1)",
  "INSERT OR IGNORE INTO jobs(id, fence, base_fence, due_at) VALUES (?1, 0, 0, 0)",
};
static const char *const sql_claim[LAYOUTS] = {
  "UPDATE jobs SET owner = ?1, until = ?3, fence = fence + 1 WHERE rowid IN"
  " (SELECT rowid FROM jobs WHERE done = 0 AND until <= ?2 ORDER BY rowid LIMIT ?4)"
  " RETURNING id, fence",
  "UPDATE jobs SET owner = ?1, until = ?3, fence = fence + 1 WHERE rowid IN"
  " (SELECT rowid FROM jobs WHERE state = 0 AND done = 0 AND queue = 'default'"
  " AND until <= ?2 ORDER BY priority, due_at, rowid LIMIT ?4)"
  " RETURNING id, fence, payload, queue, priority, max_attempts, timeout, base_fence",
};
static const char *const sql_complete[LAYOUTS] = {
  "UPDATE jobs SET result = ?5, done = 1"
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4",
  "UPDATE jobs SET result = ?5, done = 1, finished_at = ?4"
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4 AND state = 0",
};

typedef struct sketch {
  sqlite3 *db;
  sqlite3_stmt *enqueue, *claim, *complete, *begin, *commit;
  long next;   /* the next fresh id's number */
  char ids[BATCH][32];
  long long fences[BATCH];
} sketch;

/* Seconds on the monotonic clock. */
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Exit with SQLite's message unless src is a success code. */
static void check(sketch *s, int src, const char *what) {
  if (src == SQLITE_OK || src == SQLITE_DONE || src == SQLITE_ROW) return;
  fprintf(stderr, "layout_sketch: %s: %s\n", what, sqlite3_errmsg(s->db));
  exit(1);
}

/* Step st, which returns no row, and reset it. */
static void run(sketch *s, sqlite3_stmt *st) {
  check(s, sqlite3_step(st), sqlite3_sql(st));
  sqlite3_reset(st);
}

/* A fresh file at path in the layout, its statements prepared. */
static void open_sketch(sketch *s, const char *path, int layout) {
  char wal[4200];
  memset(s, 0, sizeof *s);
  remove(path);
  snprintf(wal, sizeof wal, "%s-wal", path);
  remove(wal);
  check(s, sqlite3_open(path, &s->db), "open");
  check(s, sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", 0, 0, 0),
        "pragmas");
  check(s, sqlite3_exec(s->db, schema[layout], 0, 0, 0), "schema");
  check(s, sqlite3_prepare_v3(s->db, sql_enqueue[layout], -1, 1, &s->enqueue, 0), "enqueue");
  check(s, sqlite3_prepare_v3(s->db, sql_claim[layout], -1, 1, &s->claim, 0), "claim");
  check(s, sqlite3_prepare_v3(s->db, sql_complete[layout], -1, 1, &s->complete, 0), "complete");
  check(s, sqlite3_prepare_v3(s->db, "BEGIN IMMEDIATE", -1, 1, &s->begin, 0), "begin");
  check(s, sqlite3_prepare_v3(s->db, "COMMIT", -1, 1, &s->commit, 0), "commit");
}

/* Finalize and close. */
static void close_sketch(sketch *s) {
  sqlite3_finalize(s->enqueue);
  sqlite3_finalize(s->claim);
  sqlite3_finalize(s->complete);
  sqlite3_finalize(s->begin);
  sqlite3_finalize(s->commit);
  sqlite3_close(s->db);
}

/* n fresh jobs in one transaction. */
static void enqueue_n(sketch *s, int n) {
  char id[32];
  int i;
  run(s, s->begin);
  for (i = 0; i < n; i++) {
    int len = snprintf(id, sizeof id, "j%ld", s->next++);
    sqlite3_bind_text(s->enqueue, 1, id, len, SQLITE_TRANSIENT);
    run(s, s->enqueue);
  }
  run(s, s->commit);
}

/* Claim up to n jobs in one transaction; how many. */
static int claim_n(sketch *s, int n) {
  int k = 0, src;
  run(s, s->begin);
  sqlite3_bind_text(s->claim, 1, "w", 1, SQLITE_STATIC);
  sqlite3_bind_double(s->claim, 2, 10);
  sqlite3_bind_double(s->claim, 3, 1e9);
  sqlite3_bind_int(s->claim, 4, n);
  while ((src = sqlite3_step(s->claim)) == SQLITE_ROW && k < BATCH) {
    snprintf(s->ids[k], sizeof s->ids[k], "%s", (const char *)sqlite3_column_text(s->claim, 0));
    s->fences[k++] = sqlite3_column_int64(s->claim, 1);
  }
  check(s, src, "claim");
  sqlite3_reset(s->claim);
  run(s, s->commit);
  return k;
}

/* Complete the k jobs claim_n took, in one transaction; each must store. */
static void complete_k(sketch *s, int k) {
  int i;
  run(s, s->begin);
  for (i = 0; i < k; i++) {
    sqlite3_bind_text(s->complete, 1, s->ids[i], -1, SQLITE_STATIC);
    sqlite3_bind_text(s->complete, 2, "w", 1, SQLITE_STATIC);
    sqlite3_bind_int64(s->complete, 3, s->fences[i]);
    sqlite3_bind_double(s->complete, 4, 20);
    sqlite3_bind_text(s->complete, 5, "ok", 2, SQLITE_STATIC);
    run(s, s->complete);
    if (sqlite3_changes(s->db) != 1) {
      fprintf(stderr, "layout_sketch: complete of %s refused\n", s->ids[i]);
      exit(1);
    }
  }
  run(s, s->commit);
}

/* One repetition of every workload in the layout on a fresh file: the
** cost of each into t (workload_names' units). */
static void repetition(const char *path, int layout, double *t) {
  sketch *s = malloc(sizeof *s);
  double at;
  int r, i;
  if (!s) exit(1);
  open_sketch(s, path, layout);
  t[ENQUEUE_MANY] = t[CLAIM_N] = t[COMPLETE_MANY] = 0;
  for (r = 0; r < ROUNDS; r++) {
    int k;
    at = now_s();
    enqueue_n(s, BATCH);
    t[ENQUEUE_MANY] += now_s() - at;
    at = now_s();
    k = claim_n(s, BATCH);
    t[CLAIM_N] += now_s() - at;
    at = now_s();
    complete_k(s, k);
    t[COMPLETE_MANY] += now_s() - at;
  }
  for (i = ENQUEUE_MANY; i <= COMPLETE_MANY; i++) t[i] = t[i] / (ROUNDS * BATCH) * 1e6;
  at = now_s();
  for (i = 0; i < CYCLES; i++) {
    enqueue_n(s, 1);
    complete_k(s, claim_n(s, 1));
  }
  t[CYCLE] = (now_s() - at) / CYCLES * 1e6;
  close_sketch(s);
  free(s);
}

/* For qsort: doubles ascending. */
static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n). */
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  static double t[MAX_REPS][LAYOUTS][WORKLOADS];
  double col[MAX_REPS];
  char path[4096];
  int reps = argc > 2 ? atoi(argv[2]) : 5, r, l, w;
  if (argc < 2 || reps < 1 || reps > MAX_REPS) {
    fprintf(stderr, "usage: layout_sketch DIR [REPS, 1 to %d]\n", MAX_REPS);
    return 2;
  }
  snprintf(path, sizeof path, "%s/layout_sketch.db", argv[1]);
  for (r = 0; r < reps; r++)
    for (l = 0; l < LAYOUTS; l++) {
      int layout = r % 2 ? LAYOUTS - 1 - l : l;   /* the order alternates */
      repetition(path, layout, t[r][layout]);
    }
  printf("| workload | floor | merged | floor / merged |\n|---|---:|---:|---:|\n");
  for (w = 0; w < WORKLOADS; w++) {
    double m[LAYOUTS];
    for (l = 0; l < LAYOUTS; l++) {
      for (r = 0; r < reps; r++) col[r] = t[r][l][w];
      m[l] = median(col, reps);
    }
    for (r = 0; r < reps; r++) col[r] = t[r][FLOOR][w] / t[r][MERGED][w];
    printf("| %s | %.2f | %.2f | %.2fx |\n", workload_names[w], m[FLOOR], m[MERGED],
           median(col, reps));
  }
  printf("\nmedians of %d repetitions (%s and %s alternating); ratio: per repetition, then"
         " the median\n", reps, layout_names[FLOOR], layout_names[MERGED]);
  remove(path);
  return 0;
}
