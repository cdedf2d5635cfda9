/*
** lease_bench.c: the C half of the benchmark, a Lua module
** `lease_bench` that bench/bench.lua drives.
**
** It holds what must run in C to be measured fairly:
**   - the floor: the contract's SQL (src/sqlite/lsq_sql.h's table, index
**     and guards, without the job queue beside them: see floor_sql)
**     through raw SQLite prepared statements, with the engine's pragmas,
**     and nothing else;
**   - the same workloads through the C API (lease.h);
**   - N pthreads, one handle each, running cycles on one file;
**   - a monotonic clock and the process's RSS for the Lua side.
** Both the floor and the C API sit behind one table of operations (bops),
** so each workload is written once and runs the same loop over either.
** Every workload is timed here, in C, around the operations only: ids are
** made before the clock starts.  Nothing in this file is run by the tests
** except through the smoke run (ctest bench_smoke).
*/
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <lua.h>
#include <lauxlib.h>
#include <sqlite3.h>

#include "lease.h"
#include "sqlite/lsq_sql.h"

LEASE_API int luaopen_lease_bench(lua_State *L);

/* ===================================================================== */
/* Clock and memory                                                       */
/* ===================================================================== */

/* Seconds on the monotonic clock: wall time, not CPU time, since waiting
** for the disk (fsync) and for the write lock is part of what we measure. */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds of CPU time this process used (all threads): beside wall time,
** because on a shared machine a CPU-bound workload's wall time also counts
** the time other processes held the CPU. */
static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Read VmRSS and VmHWM (kB) from /proc/self/status; 0 when unreadable. */
static void read_rss(long *rss, long *hwm) {
  char line[256];
  FILE *f = fopen("/proc/self/status", "r");
  *rss = *hwm = 0;
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "VmRSS:", 6) == 0) *rss = strtol(line + 6, NULL, 10);
    else if (strncmp(line, "VmHWM:", 6) == 0) *hwm = strtol(line + 6, NULL, 10);
  }
  fclose(f);
}

/* ===================================================================== */
/* Ids, made before timing                                                */
/* ===================================================================== */

/* n ids "<prefix><i>" in one block, with their lengths. */
typedef struct idset {
  int n;
  char *buf;
  const char **ids;
  size_t *lens;
} idset;

/* Fill s with n ids; returns 0, or -1 when memory ran out. */
static int ids_make(idset *s, const char *prefix, int n) {
  size_t plen = strlen(prefix), step = plen + 12, off = 0;
  int i;
  s->n = n;
  s->buf = malloc(step * (size_t)(n ? n : 1));
  s->ids = malloc(sizeof *s->ids * (size_t)(n ? n : 1));
  s->lens = malloc(sizeof *s->lens * (size_t)(n ? n : 1));
  if (!s->buf || !s->ids || !s->lens) return -1;
  for (i = 0; i < n; i++) {
    int len = snprintf(s->buf + off, step, "%s%d", prefix, i);
    s->ids[i] = s->buf + off;
    s->lens[i] = (size_t)len;
    off += step;
  }
  return 0;
}

/* Free what ids_make allocated. */
static void ids_free(idset *s) {
  free(s->buf);
  free(s->ids);
  free(s->lens);
}

/* ===================================================================== */
/* The operations, behind one table for the floor and the C API           */
/* ===================================================================== */

/* An operation's outcome: LEASE_OK, a lease_rc error, or REFUSED when the
** contract said no (a workload here never expects that). */
#define REFUSED (-1)

/* One completion for complete_many: id, fence and result. */
typedef struct bdone {
  const char *id;
  size_t id_len;
  int64_t fence;
} bdone;

typedef struct bops {
  const char *name;
  int (*enqueue)(void *h, const char *id, size_t len);
  int (*claim)(void *h, const char *id, size_t len, double now, double ttl, int64_t *fence);
  int (*renew)(void *h, const char *id, size_t len, int64_t fence, double now, double ttl);
  int (*complete)(void *h, const char *id, size_t len, int64_t fence, double now);
  /* Claim up to max oldest ready jobs; ids stay valid until the next call. */
  int (*claim_next)(void *h, double now, double ttl, int max, lease_job *jobs, int *count);
  int (*enqueue_many)(void *h, const char *const *ids, const size_t *lens, int n);
  /* Complete n jobs in one transaction; NULL when the API has none. */
  int (*complete_many)(void *h, const bdone *done, int n, double now);
  /* complete_many then claim_next (up to max) in one transaction. */
  int (*complete_many_claim_next)(void *h, const bdone *done, int n, double now, double ttl,
                                  int max, lease_job *jobs, int *count);
  const char *(*errmsg)(void *h);
} bops;

/* Every workload claims as this owner and stores this result. */
#define OWNER "worker-1"
#define OWNER_LEN 8
#define RESULT "ok"
#define RESULT_LEN 2

/* ---------------------------------------------------------------------
** The floor: raw SQLite, the engine's statements and pragmas, no engine.
** The statements are the engine's own, from its private SQL header.
** --------------------------------------------------------------------- */

enum {
  F_BEGIN, F_COMMIT, F_ROLLBACK, F_ENQUEUE, F_CLAIM, F_RENEW, F_COMPLETE, F_CLAIM_NEXT,
  F_COUNT
};

/*
** The contract's statements alone, without the job queue beside the table
** (the engine's guards add "the queue has not ended the job", and its
** claim_next reads the queue's index): the cost of the cycle before the
** queue existed, measured in the same run as the engine with it.  The
** guards are the contract's, as src/sqlite/lsq_sql.h writes them.
*/
#define FLOOR_SQL_CLAIM                                                   \
  "UPDATE jobs SET owner = ?2, until = ?4, fence = fence + 1"            \
  " WHERE id = ?1 AND done = 0 AND until <= ?3"                          \
  " AND " LSQ_SQL_BLOCKED " = 0 RETURNING fence"
#define FLOOR_SQL_RENEW                                                   \
  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \
  " AND " LSQ_SQL_BLOCKED " = 0"
#define FLOOR_SQL_COMPLETE                                                \
  "UPDATE jobs SET result = ?5, done = 1"                                \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \
  " AND " LSQ_SQL_BLOCKED " = 0"
#define FLOOR_SQL_CLAIM_NEXT                                              \
  "UPDATE jobs SET owner = ?1, until = ?3, fence = fence + 1"            \
  " WHERE rowid IN (SELECT rowid FROM jobs WHERE done = 0 AND until <= ?2" \
  " AND " LSQ_SQL_BLOCKED " = 0"                                         \
  " ORDER BY rowid LIMIT ?4)"                                            \
  " RETURNING rowid, id, fence"

static const char *const floor_sql[F_COUNT] = {
  LSQ_SQL_BEGIN, LSQ_SQL_COMMIT, LSQ_SQL_ROLLBACK, LSQ_SQL_ENQUEUE,
  FLOOR_SQL_CLAIM, FLOOR_SQL_RENEW, FLOOR_SQL_COMPLETE, FLOOR_SQL_CLAIM_NEXT,
};

/* The contract's table and, for the floor's claim_next, an index of the
** jobs not done (what the engine read before the job queue's own index). */
#define FLOOR_SQL_PENDING_INDEX                                           \
  "CREATE INDEX IF NOT EXISTS lease_jobs_pending ON jobs(done) WHERE done = 0"
static const char *const floor_schema[2] = {
  LSQ_SQL_CREATE_JOBS,
  FLOOR_SQL_PENDING_INDEX,
};

typedef struct floordb {
  sqlite3 *conn;
  sqlite3_stmt *st[F_COUNT];
  char *buf;         /* claim_next's ids, copied out as the engine does */
  size_t bufcap;
  char err[256];
} floordb;

/* Record SQLite's message and map its code to a lease_rc, so the thread
** workload counts busy errors the same way for the floor and the engine. */
static int f_fail(floordb *f, int src) {
  snprintf(f->err, sizeof f->err, "%s", sqlite3_errmsg(f->conn));
  if (!sqlite3_get_autocommit(f->conn)) {
    sqlite3_step(f->st[F_ROLLBACK]);
    sqlite3_reset(f->st[F_ROLLBACK]);
  }
  return (src & 0xff) == SQLITE_BUSY ? LEASE_BUSY : LEASE_ERROR;
}

/* Step a statement that returns no row, then reset it. */
static int f_run(floordb *f, int which) {
  sqlite3_stmt *st = f->st[which];
  int src = sqlite3_step(st);
  sqlite3_reset(st);
  return src == SQLITE_DONE ? LEASE_OK : f_fail(f, src);
}

/* Open path as the engine does (NOMUTEX, WAL, synchronous, busy timeout;
** SQLite's own busy handler, since the floor has no engine), create the
** engine's schema and prepare the statements.  NULL on failure, with the
** message in err. */
static floordb *floor_open(const char *path, int sync, char *err, size_t errlen) {
  floordb *f = calloc(1, sizeof *f);
  int i, src;
  if (!f) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  src = sqlite3_open_v2(path, &f->conn,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
  if (src == SQLITE_OK) src = sqlite3_busy_timeout(f->conn, 10000);
  if (src == SQLITE_OK) src = sqlite3_exec(f->conn, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
  if (src == SQLITE_OK)
    src = sqlite3_exec(f->conn, sync == LEASE_SYNC_FULL ? "PRAGMA synchronous=FULL"
                                                        : "PRAGMA synchronous=NORMAL",
                       NULL, NULL, NULL);
  for (i = 0; i < 2 && src == SQLITE_OK; i++)
    src = sqlite3_exec(f->conn, floor_schema[i], NULL, NULL, NULL);
  for (i = 0; i < F_COUNT && src == SQLITE_OK; i++)
    src = sqlite3_prepare_v3(f->conn, floor_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &f->st[i],
                             NULL);
  if (src != SQLITE_OK) {
    snprintf(err, errlen, "floor open %s: %s", path,
             f->conn ? sqlite3_errmsg(f->conn) : sqlite3_errstr(src));
    for (i = 0; i < F_COUNT; i++) sqlite3_finalize(f->st[i]);
    sqlite3_close_v2(f->conn);
    free(f);
    return NULL;
  }
  return f;
}

/* Finalize and close. */
static void floor_close(floordb *f) {
  int i;
  if (!f) return;
  for (i = 0; i < F_COUNT; i++) sqlite3_finalize(f->st[i]);
  sqlite3_close_v2(f->conn);
  free(f->buf);
  free(f);
}

/* Floor enqueue: the INSERT OR IGNORE alone, in autocommit as the engine. */
static int f_enqueue(void *h, const char *id, size_t len) {
  floordb *f = h;
  sqlite3_bind_text(f->st[F_ENQUEUE], 1, id, (int)len, SQLITE_STATIC);
  return f_run(f, F_ENQUEUE);
}

/* Floor claim: BEGIN IMMEDIATE, the guarded UPDATE ... RETURNING, COMMIT. */
static int f_claim(void *h, const char *id, size_t len, double now, double ttl, int64_t *fence) {
  floordb *f = h;
  sqlite3_stmt *st = f->st[F_CLAIM];
  int src, rc, got = 0;
  if ((rc = f_run(f, F_BEGIN)) != LEASE_OK) return rc;
  sqlite3_bind_text(st, 1, id, (int)len, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, OWNER, OWNER_LEN, SQLITE_STATIC);
  sqlite3_bind_double(st, 3, now);
  sqlite3_bind_double(st, 4, now + ttl);
  while ((src = sqlite3_step(st)) == SQLITE_ROW) {
    *fence = sqlite3_column_int64(st, 0);
    got = 1;
  }
  sqlite3_reset(st);
  if (src != SQLITE_DONE) return f_fail(f, src);
  if ((rc = f_run(f, F_COMMIT)) != LEASE_OK) return rc;
  return got ? LEASE_OK : REFUSED;
}

/* Floor guarded write (renew or complete): BEGIN IMMEDIATE, UPDATE, COMMIT. */
static int f_write(floordb *f, int which, const char *id, size_t len, int64_t fence, double now,
                   double until) {
  sqlite3_stmt *st = f->st[which];
  int src, rc, changed;
  if ((rc = f_run(f, F_BEGIN)) != LEASE_OK) return rc;
  sqlite3_bind_text(st, 1, id, (int)len, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, OWNER, OWNER_LEN, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, fence);
  sqlite3_bind_double(st, 4, now);
  if (which == F_RENEW) sqlite3_bind_double(st, 5, until);
  else sqlite3_bind_text(st, 5, RESULT, RESULT_LEN, SQLITE_STATIC);
  src = sqlite3_step(st);
  sqlite3_reset(st);
  if (src != SQLITE_DONE) return f_fail(f, src);
  changed = sqlite3_changes(f->conn);
  if ((rc = f_run(f, F_COMMIT)) != LEASE_OK) return rc;
  return changed == 1 ? LEASE_OK : REFUSED;
}

/* Floor renew. */
static int f_renew(void *h, const char *id, size_t len, int64_t fence, double now, double ttl) {
  return f_write(h, F_RENEW, id, len, fence, now, now + ttl);
}

/* Floor complete. */
static int f_complete(void *h, const char *id, size_t len, int64_t fence, double now) {
  return f_write(h, F_COMPLETE, id, len, fence, now, 0);
}

/* The floor's claim_next UPDATE ... RETURNING inside an open transaction;
** the ids are copied out before the reset, as any caller must. */
static int f_claim_rows(floordb *f, double now, double ttl, int max, lease_job *jobs, int *n_out) {
  sqlite3_stmt *st = f->st[F_CLAIM_NEXT];
  size_t used = 0;
  size_t *offs = NULL;
  int src = SQLITE_DONE, n = 0, i;
  sqlite3_bind_text(st, 1, OWNER, OWNER_LEN, SQLITE_STATIC);
  sqlite3_bind_double(st, 2, now);
  sqlite3_bind_double(st, 3, now + ttl);
  sqlite3_bind_int(st, 4, max);
  offs = malloc(sizeof *offs * (size_t)max);
  while (offs && (src = sqlite3_step(st)) == SQLITE_ROW) {
    const void *id = sqlite3_column_text(st, 1);
    size_t len = (size_t)sqlite3_column_bytes(st, 1);
    if (used + len + 1 > f->bufcap) {
      size_t cap = (used + len + 1) * 2;
      char *p = realloc(f->buf, cap);
      if (!p) break;
      f->buf = p;
      f->bufcap = cap;
    }
    memcpy(f->buf + used, id, len);
    f->buf[used + len] = '\0';
    offs[n] = used;
    jobs[n].id_len = len;
    jobs[n].fence = sqlite3_column_int64(st, 2);
    used += len + 1;
    n++;
  }
  sqlite3_reset(st);
  if (!offs || src != SQLITE_DONE) {
    free(offs);
    if (!offs || src == SQLITE_ROW) {
      snprintf(f->err, sizeof f->err, "out of memory");
      f_fail(f, SQLITE_NOMEM);
      return LEASE_NOMEM;
    }
    return f_fail(f, src);
  }
  for (i = 0; i < n; i++) jobs[i].id = f->buf + offs[i];
  free(offs);
  *n_out = n;
  return LEASE_OK;
}

/* Floor claim_next: BEGIN IMMEDIATE, the UPDATE ... RETURNING, COMMIT. */
static int f_claim_next(void *h, double now, double ttl, int max, lease_job *jobs, int *count) {
  floordb *f = h;
  int rc, n = 0;
  *count = 0;
  if ((rc = f_run(f, F_BEGIN)) != LEASE_OK) return rc;
  if ((rc = f_claim_rows(f, now, ttl, max, jobs, &n)) != LEASE_OK) return rc;
  if ((rc = f_run(f, F_COMMIT)) != LEASE_OK) return rc;
  *count = n;
  return LEASE_OK;
}

/* Floor enqueue_many: the INSERT OR IGNORE n times in one transaction. */
static int f_enqueue_many(void *h, const char *const *ids, const size_t *lens, int n) {
  floordb *f = h;
  sqlite3_stmt *st = f->st[F_ENQUEUE];
  int i, src, rc;
  if ((rc = f_run(f, F_BEGIN)) != LEASE_OK) return rc;
  for (i = 0; i < n; i++) {
    sqlite3_bind_text(st, 1, ids[i], (int)lens[i], SQLITE_STATIC);
    src = sqlite3_step(st);
    sqlite3_reset(st);
    if (src != SQLITE_DONE) return f_fail(f, src);
  }
  return f_run(f, F_COMMIT);
}

/* The guarded complete UPDATE for each of n jobs inside an open
** transaction; *refused: how many changed nothing. */
static int f_complete_rows(floordb *f, const bdone *done, int n, double now, int *refused) {
  sqlite3_stmt *st = f->st[F_COMPLETE];
  int i, src;
  *refused = 0;
  for (i = 0; i < n; i++) {
    sqlite3_bind_text(st, 1, done[i].id, (int)done[i].id_len, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, OWNER, OWNER_LEN, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, done[i].fence);
    sqlite3_bind_double(st, 4, now);
    sqlite3_bind_text(st, 5, RESULT, RESULT_LEN, SQLITE_STATIC);
    src = sqlite3_step(st);
    sqlite3_reset(st);
    if (src != SQLITE_DONE) return f_fail(f, src);
    if (sqlite3_changes(f->conn) != 1) ++*refused;
  }
  return LEASE_OK;
}

/* Floor complete_many: the guarded complete UPDATE n times in one
** transaction (what a batched complete has to do at least). */
static int f_complete_many(void *h, const bdone *done, int n, double now) {
  floordb *f = h;
  int rc, refused = 0;
  if ((rc = f_run(f, F_BEGIN)) != LEASE_OK) return rc;
  if ((rc = f_complete_rows(f, done, n, now, &refused)) != LEASE_OK) return rc;
  if ((rc = f_run(f, F_COMMIT)) != LEASE_OK) return rc;
  return refused ? REFUSED : LEASE_OK;
}

/* Floor complete_many_claim_next: the same statements as complete_many's
** and claim_next's, in one transaction. */
static int f_complete_many_claim_next(void *h, const bdone *done, int n, double now, double ttl,
                                      int max, lease_job *jobs, int *count) {
  floordb *f = h;
  int rc, refused = 0, got = 0;
  *count = 0;
  if ((rc = f_run(f, F_BEGIN)) != LEASE_OK) return rc;
  if ((rc = f_complete_rows(f, done, n, now, &refused)) != LEASE_OK) return rc;
  if ((rc = f_claim_rows(f, now, ttl, max, jobs, &got)) != LEASE_OK) return rc;
  if ((rc = f_run(f, F_COMMIT)) != LEASE_OK) return rc;
  *count = got;
  return refused ? REFUSED : LEASE_OK;
}

/* The floor's last message. */
static const char *f_errmsg(void *h) {
  return ((floordb *)h)->err;
}

static const bops floor_ops = {
  "floor", f_enqueue, f_claim, f_renew, f_complete, f_claim_next, f_enqueue_many,
  f_complete_many, f_complete_many_claim_next, f_errmsg,
};

/* ---------------------------------------------------------------------
** The C API: the same operations through lease.h.
** --------------------------------------------------------------------- */

/* Map a call's (rc, reason) to the bench's outcome. */
static int c_outcome(int rc, int reason) {
  if (rc != LEASE_OK) return rc;
  return reason == LEASE_GRANTED ? LEASE_OK : REFUSED;
}

/* lease_enqueue of a job with nothing but its id. */
static int c_enqueue(void *h, const char *id, size_t len) {
  lease_new_job job;
  int reason = LEASE_GRANTED;
  lease_new_job_default(&job);
  job.id = id;
  job.id_len = len;
  return c_outcome(lease_enqueue(h, &job, &reason), reason);
}

/* lease_claim. */
static int c_claim(void *h, const char *id, size_t len, double now, double ttl, int64_t *fence) {
  int reason = LEASE_GRANTED;
  int rc = lease_claim(h, id, len, OWNER, OWNER_LEN, now, ttl, fence, &reason);
  return c_outcome(rc, reason);
}

/* lease_renew. */
static int c_renew(void *h, const char *id, size_t len, int64_t fence, double now, double ttl) {
  int reason = LEASE_GRANTED;
  int rc = lease_renew(h, id, len, OWNER, OWNER_LEN, fence, now, ttl, &reason);
  return c_outcome(rc, reason);
}

/* lease_complete. */
static int c_complete(void *h, const char *id, size_t len, int64_t fence, double now) {
  int reason = LEASE_GRANTED;
  int rc = lease_complete(h, id, len, OWNER, OWNER_LEN, fence, now, RESULT, RESULT_LEN, &reason);
  return c_outcome(rc, reason);
}

/* lease_claim_next. */
static int c_claim_next(void *h, double now, double ttl, int max, lease_job *jobs, int *count) {
  return lease_claim_next(h, NULL, 0, OWNER, OWNER_LEN, now, ttl, max, jobs, count, NULL);
}

/* lease_enqueue_many of jobs with nothing but their ids (one allocation
** per batch to turn the bench's list into lease_new_job items). */
static int c_enqueue_many(void *h, const char *const *ids, const size_t *lens, int n) {
  lease_new_job *jobs = malloc(sizeof *jobs * (size_t)(n ? n : 1));
  int i, rc, inserted = 0;
  if (!jobs) return LEASE_NOMEM;
  for (i = 0; i < n; i++) {
    lease_new_job_default(&jobs[i]);
    jobs[i].id = ids[i];
    jobs[i].id_len = lens[i];
  }
  rc = lease_enqueue_many(h, jobs, n, &inserted);
  free(jobs);
  return rc != LEASE_OK ? rc : inserted == n ? LEASE_OK : REFUSED;
}

/* The bench's list as lease_result items, each with RESULT (one
** allocation per batch; the caller frees it); NULL when out of memory. */
static lease_result *results_of(const bdone *done, int n) {
  lease_result *items = malloc(sizeof *items * (size_t)(n ? n : 1));
  int i;
  for (i = 0; items && i < n; i++) {
    items[i].id = done[i].id;
    items[i].id_len = done[i].id_len;
    items[i].fence = done[i].fence;
    items[i].result = RESULT;
    items[i].result_len = RESULT_LEN;
  }
  return items;
}

/* lease_complete_many: the batch in one transaction. */
static int c_complete_many(void *h, const bdone *done, int n, double now) {
  lease_result *items = results_of(done, n);
  int rc, stored = 0;
  if (!items) return LEASE_NOMEM;
  rc = lease_complete_many(h, OWNER, OWNER_LEN, now, items, n, NULL, &stored);
  free(items);
  return rc != LEASE_OK ? rc : stored == n ? LEASE_OK : REFUSED;
}

/* lease_complete_many_claim_next: the batch and the next claim in one
** transaction. */
static int c_complete_many_claim_next(void *h, const bdone *done, int n, double now, double ttl,
                                      int max, lease_job *jobs, int *count) {
  lease_result *items = results_of(done, n);
  int rc, stored = 0;
  if (!items) return LEASE_NOMEM;
  rc = lease_complete_many_claim_next(h, OWNER, OWNER_LEN, now, items, n, NULL, &stored, NULL, 0,
                                      ttl, max, jobs, count, NULL);
  free(items);
  return rc != LEASE_OK ? rc : stored == n ? LEASE_OK : REFUSED;
}

/* The handle's last message. */
static const char *c_errmsg(void *h) {
  return lease_errmsg(h);
}

static const bops capi_ops = {
  "capi", c_enqueue, c_claim, c_renew, c_complete, c_claim_next, c_enqueue_many,
  c_complete_many, c_complete_many_claim_next, c_errmsg,
};

/* ===================================================================== */
/* The Lua object: a floor or C-API connection with workload methods      */
/* ===================================================================== */

#define BDB_MT "lease_bench.db"

typedef struct bdb {
  const bops *ops;
  void *h;          /* floordb * or lease_db *; NULL when closed */
} bdb;

/* Close whichever connection b holds. */
static void bdb_close(bdb *b) {
  if (!b->h) return;
  if (b->ops == &floor_ops) floor_close(b->h);
  else lease_close(b->h);
  b->h = NULL;
}

/* Open path with the floor or the C API; raises on failure. */
static void bdb_open(lua_State *L, bdb *b, int floor, const char *path, int sync) {
  char err[512];
  b->ops = floor ? &floor_ops : &capi_ops;
  if (floor) {
    b->h = floor_open(path, sync, err, sizeof err);
    if (!b->h) luaL_error(L, "%s", err);
  } else {
    lease_options opt;
    lease_db *db = NULL;
    lease_options_default(&opt);
    opt.synchronous = sync;
    if (lease_open(path, &opt, &db) != LEASE_OK) {
      lua_pushfstring(L, "lease_open %s: %s", path, lease_errmsg(db));
      lease_close(db);
      lua_error(L);
    }
    b->h = db;
  }
}

/* "full" or "normal" at i, as LEASE_SYNC_*. */
static int check_sync(lua_State *L, int i) {
  static const char *const names[] = {"full", "normal", NULL};
  return luaL_checkoption(L, i, NULL, names) == 0 ? LEASE_SYNC_FULL : LEASE_SYNC_NORMAL;
}

/* The open bench connection at 1. */
static bdb *check_bdb(lua_State *L) {
  bdb *b = luaL_checkudata(L, 1, BDB_MT);
  if (!b->h) luaL_error(L, "bench connection is closed");
  return b;
}

/* Raise "<api> <what>: <message>" after a failed operation (rc) inside a
** workload, freeing ids first. */
static int op_error(lua_State *L, bdb *b, const char *what, int rc, idset *ids) {
  if (ids) ids_free(ids);
  if (rc == REFUSED) return luaL_error(L, "%s %s: refused by the contract", b->ops->name, what);
  return luaL_error(L, "%s %s: %s [%s]", b->ops->name, what, b->ops->errmsg(b->h),
                    lease_errname(rc));
}

/* The prefix and count arguments at 2 and 3 made into ids; raises. */
static void arg_ids(lua_State *L, idset *ids, int count_at) {
  const char *prefix = luaL_checkstring(L, 2);
  lua_Integer n = luaL_checkinteger(L, count_at);
  luaL_argcheck(L, n >= 0 && n <= 100000000, count_at, "count out of range");
  if (ids_make(ids, prefix, (int)n) != 0) {
    ids_free(ids);
    luaL_error(L, "out of memory");
  }
}

/*
** b:cycle(prefix, n) -> seconds, cpu_seconds
** n cycles of enqueue + claim + complete on fresh ids "<prefix><i>": the
** basic cycle, three transactions each.
*/
static int b_cycle(lua_State *L) {
  bdb *b = check_bdb(L);
  idset ids;
  double t0, t, c0;
  int i, rc;
  arg_ids(L, &ids, 3);
  c0 = cpu_s();
  t0 = now_s();
  for (i = 0; i < ids.n; i++) {
    int64_t fence = 0;
    if ((rc = b->ops->enqueue(b->h, ids.ids[i], ids.lens[i])) != LEASE_OK)
      return op_error(L, b, "enqueue", rc, &ids);
    if ((rc = b->ops->claim(b->h, ids.ids[i], ids.lens[i], 1.0, 1e9, &fence)) != LEASE_OK)
      return op_error(L, b, "claim", rc, &ids);
    if ((rc = b->ops->complete(b->h, ids.ids[i], ids.lens[i], fence, 1.0)) != LEASE_OK)
      return op_error(L, b, "complete", rc, &ids);
  }
  t = now_s() - t0;
  c0 = cpu_s() - c0;
  ids_free(&ids);
  lua_pushnumber(L, t);
  lua_pushnumber(L, c0);
  return 2;
}

/*
** b:qcycle(prefix, n) -> seconds, cpu_seconds
** n cycles of enqueue + claim_next + complete on fresh ids "<prefix><i>",
** three transactions each: the job queue's cycle.  claim_next takes the
** job just enqueued (the only one ready).
*/
static int b_qcycle(lua_State *L) {
  bdb *b = check_bdb(L);
  idset ids;
  double t0, t, c0;
  int i, rc, count;
  arg_ids(L, &ids, 3);
  c0 = cpu_s();
  t0 = now_s();
  for (i = 0; i < ids.n; i++) {
    lease_job job;
    if ((rc = b->ops->enqueue(b->h, ids.ids[i], ids.lens[i])) != LEASE_OK)
      return op_error(L, b, "enqueue", rc, &ids);
    if ((rc = b->ops->claim_next(b->h, 1.0, 1e9, 1, &job, &count)) != LEASE_OK)
      return op_error(L, b, "claim_next", rc, &ids);
    if (count != 1) return op_error(L, b, "claim_next", REFUSED, &ids);
    if ((rc = b->ops->complete(b->h, job.id, job.id_len, job.fence, 1.0)) != LEASE_OK)
      return op_error(L, b, "complete", rc, &ids);
  }
  t = now_s() - t0;
  c0 = cpu_s() - c0;
  ids_free(&ids);
  lua_pushnumber(L, t);
  lua_pushnumber(L, c0);
  return 2;
}

/*
** b:renew(id, n) -> seconds, cpu_seconds
** Enqueue and claim id (untimed), then renew it n times, now advancing by
** 1 each time and ttl 1e9, so the lease stays valid and every renew
** really changes until (SQLite skips writing a row that did not change,
** so renewing to the same deadline would measure a commit of nothing).
*/
static int b_renew(lua_State *L) {
  bdb *b = check_bdb(L);
  size_t len;
  const char *id = luaL_checklstring(L, 2, &len);
  lua_Integer n = luaL_checkinteger(L, 3), i;
  int64_t fence = 0;
  double t0, t, c0;
  int rc;
  if ((rc = b->ops->enqueue(b->h, id, len)) != LEASE_OK) return op_error(L, b, "enqueue", rc, NULL);
  if ((rc = b->ops->claim(b->h, id, len, 1.0, 1e9, &fence)) != LEASE_OK)
    return op_error(L, b, "claim", rc, NULL);
  c0 = cpu_s();
  t0 = now_s();
  for (i = 0; i < n; i++)
    if ((rc = b->ops->renew(b->h, id, len, fence, 2.0 + (double)i, 1e9)) != LEASE_OK)
      return op_error(L, b, "renew", rc, NULL);
  t = now_s() - t0;
  c0 = cpu_s() - c0;
  lua_pushnumber(L, t);
  lua_pushnumber(L, c0);
  return 2;
}

/*
** b:fill(prefix, n [, batch]) -> seconds
** Enqueue n jobs "<prefix><i>" in transactions of batch (default 10000):
** how the claim_next workload sets its table size.
*/
static int b_fill(lua_State *L) {
  bdb *b = check_bdb(L);
  lua_Integer batch = luaL_optinteger(L, 4, 10000);
  idset ids;
  double t0, t;
  int i, rc;
  luaL_argcheck(L, batch >= 1, 4, "batch must be >= 1");
  arg_ids(L, &ids, 3);
  t0 = now_s();
  for (i = 0; i < ids.n; i += (int)batch) {
    int k = ids.n - i < batch ? ids.n - i : (int)batch;
    if ((rc = b->ops->enqueue_many(b->h, ids.ids + i, ids.lens + i, k)) != LEASE_OK)
      return op_error(L, b, "enqueue_many", rc, &ids);
  }
  t = now_s() - t0;
  ids_free(&ids);
  lua_pushnumber(L, t);
  return 1;
}

/*
** b:claim_next(prefix, n) -> seconds
** n times: claim_next one job (timed), then complete it and enqueue a new
** job "<prefix><i>" (untimed), so the number of pending jobs stays what
** the table held.  Returns the time spent in claim_next alone.
*/
static int b_claim_next(lua_State *L) {
  bdb *b = check_bdb(L);
  idset ids;
  double t = 0;
  int i, rc;
  arg_ids(L, &ids, 3);
  for (i = 0; i < ids.n; i++) {
    lease_job job;
    int count = 0;
    double t0 = now_s();
    rc = b->ops->claim_next(b->h, 1.0, 1e9, 1, &job, &count);
    t += now_s() - t0;
    if (rc != LEASE_OK) return op_error(L, b, "claim_next", rc, &ids);
    if (count != 1) return op_error(L, b, "claim_next (empty)", REFUSED, &ids);
    if ((rc = b->ops->complete(b->h, job.id, job.id_len, job.fence, 1.0)) != LEASE_OK)
      return op_error(L, b, "complete", rc, &ids);
    if ((rc = b->ops->enqueue(b->h, ids.ids[i], ids.lens[i])) != LEASE_OK)
      return op_error(L, b, "enqueue", rc, &ids);
  }
  ids_free(&ids);
  lua_pushnumber(L, t);
  return 1;
}

/*
** b:batch(prefix, rounds, size, part, many) -> seconds
** rounds times, on size fresh jobs: enqueue_many them (one transaction),
** claim_next(size) (one transaction), then complete them: one transaction
** per job (complete) or, when many is true, one in all (complete_many).
** part selects what is timed: "all" (end to end), "enqueue" (enqueue_many
** alone) or "claim" (claim_next alone); the rest still runs, untimed.
*/
static int b_batch(lua_State *L) {
  static const char *const parts[] = {"all", "enqueue", "claim", NULL};
  bdb *b = check_bdb(L);
  lua_Integer rounds = luaL_checkinteger(L, 3), size = luaL_checkinteger(L, 4);
  int part = luaL_checkoption(L, 5, "all", parts);
  int many = lua_toboolean(L, 6);
  idset ids;
  lease_job *jobs;
  bdone *done;
  double t = 0, t0;
  int r, i, rc, count;
  luaL_argcheck(L, size >= 1 && size <= 1000000, 4, "size out of range");
  if (many && !b->ops->complete_many)
    return luaL_error(L, "%s has no complete_many", b->ops->name);
  luaL_argcheck(L, rounds >= 0 && rounds * size <= 100000000, 3, "rounds out of range");
  lua_pushinteger(L, rounds * size);
  lua_replace(L, 3);
  arg_ids(L, &ids, 3);
  jobs = malloc(sizeof *jobs * (size_t)size);
  done = malloc(sizeof *done * (size_t)size);
  if (!jobs || !done) {
    free(jobs);
    free(done);
    ids_free(&ids);
    return luaL_error(L, "out of memory");
  }
  for (r = 0; r < rounds; r++) {
    const char *const *bid = ids.ids + (size_t)r * (size_t)size;
    const size_t *blen = ids.lens + (size_t)r * (size_t)size;
    t0 = now_s();
    rc = b->ops->enqueue_many(b->h, bid, blen, (int)size);
    if (part == 1) t += now_s() - t0;
    if (rc != LEASE_OK) goto failed_enqueue;
    if (part == 2) t0 = now_s();
    rc = b->ops->claim_next(b->h, 1.0, 1e9, (int)size, jobs, &count);
    if (part == 2) t += now_s() - t0;
    if (rc != LEASE_OK || count != size) goto failed_claim;
    if (many) {
      for (i = 0; i < count; i++) {
        done[i].id = jobs[i].id;
        done[i].id_len = jobs[i].id_len;
        done[i].fence = jobs[i].fence;
      }
      rc = b->ops->complete_many(b->h, done, count, 1.0);
    } else {
      for (i = 0, rc = LEASE_OK; i < count && rc == LEASE_OK; i++)
        rc = b->ops->complete(b->h, jobs[i].id, jobs[i].id_len, jobs[i].fence, 1.0);
    }
    if (part == 0) t += now_s() - t0;
    if (rc != LEASE_OK) goto failed_complete;
  }
  free(jobs);
  free(done);
  ids_free(&ids);
  lua_pushnumber(L, t);
  return 1;
failed_enqueue:
  free(jobs);
  free(done);
  return op_error(L, b, "enqueue_many", rc, &ids);
failed_claim:
  free(jobs);
  free(done);
  return op_error(L, b, "claim_next", rc == LEASE_OK ? REFUSED : rc, &ids);
failed_complete:
  free(jobs);
  free(done);
  return op_error(L, b, "complete", rc, &ids);
}

/* The jobs held as complete_many's list. */
static void as_done(const lease_job *jobs, int n, bdone *done) {
  int i;
  for (i = 0; i < n; i++) {
    done[i].id = jobs[i].id;
    done[i].id_len = jobs[i].id_len;
    done[i].fence = jobs[i].fence;
  }
}

/*
** b:fused(prefix, rounds, size) -> seconds
** A batch worker's steady state: the first size fresh jobs enqueued and
** claimed (untimed), then rounds times: size more enqueued (untimed), and
** the batch held completed with the next claimed by complete_many_claim_next
** (timed: one transaction); the last batch completed with complete_many
** (untimed).  rounds * size jobs pass through the timed step.
*/
static int b_fused(lua_State *L) {
  bdb *b = check_bdb(L);
  lua_Integer rounds = luaL_checkinteger(L, 3), size = luaL_checkinteger(L, 4);
  idset ids;
  lease_job *jobs;
  bdone *done;
  double t = 0, t0;
  int r, rc, count = 0;
  luaL_argcheck(L, size >= 1 && size <= 1000000, 4, "size out of range");
  luaL_argcheck(L, rounds >= 1 && (rounds + 1) * size <= 100000000, 3, "rounds out of range");
  lua_pushinteger(L, (rounds + 1) * size);
  lua_replace(L, 3);
  arg_ids(L, &ids, 3);
  jobs = malloc(sizeof *jobs * (size_t)size);
  done = malloc(sizeof *done * (size_t)size);
  rc = jobs && done ? LEASE_OK : LEASE_NOMEM;
  if (rc == LEASE_OK) rc = b->ops->enqueue_many(b->h, ids.ids, ids.lens, (int)size);
  if (rc == LEASE_OK) rc = b->ops->claim_next(b->h, 1.0, 1e9, (int)size, jobs, &count);
  for (r = 1; r <= rounds && rc == LEASE_OK && count == size; r++) {
    size_t at = (size_t)r * (size_t)size;
    rc = b->ops->enqueue_many(b->h, ids.ids + at, ids.lens + at, (int)size);
    as_done(jobs, count, done);
    t0 = now_s();
    if (rc == LEASE_OK)
      rc = b->ops->complete_many_claim_next(b->h, done, count, 1.0, 1e9, (int)size, jobs, &count);
    t += now_s() - t0;
  }
  if (rc == LEASE_OK && count == size) {
    as_done(jobs, count, done);
    rc = b->ops->complete_many(b->h, done, count, 1.0);
  }
  free(jobs);
  free(done);
  if (rc != LEASE_OK || count != size)
    return op_error(L, b, "complete_many_claim_next", rc == LEASE_OK ? REFUSED : rc, &ids);
  ids_free(&ids);
  lua_pushnumber(L, t);
  return 1;
}

/* n owner names "o0".."o<n-1>" in one block, for the claim_many workloads. */
static int owners_make(idset *o, int n) {
  return ids_make(o, "o", n);
}

/*
** b:claim_many(prefix, nowners, calls) -> seconds
** calls times: enqueue a fresh job (untimed), then one lease_claim_many of
** it for nowners owners (timed: it starts the threads and opens their
** connections, which is what it does).  Raises unless exactly one owner
** got a fence each time.  C API only.
*/
static int b_claim_many(lua_State *L) {
  bdb *b = check_bdb(L);
  lua_Integer n = luaL_checkinteger(L, 3);
  idset ids, owners;
  int64_t *fences;
  double t = 0;
  int i, k, rc;
  if (b->ops != &capi_ops) return luaL_error(L, "claim_many: C API connections only");
  luaL_argcheck(L, n >= 1 && n <= 4096, 3, "1 to 4096 owners");
  arg_ids(L, &ids, 4);
  fences = malloc(sizeof *fences * (size_t)n);
  if (!fences || owners_make(&owners, (int)n) != 0) {
    free(fences);
    ids_free(&ids);
    return luaL_error(L, "out of memory");
  }
  for (i = 0; i < ids.n; i++) {
    int won = 0;
    double t0;
    if ((rc = b->ops->enqueue(b->h, ids.ids[i], ids.lens[i])) != LEASE_OK) break;
    t0 = now_s();
    rc = lease_claim_many(b->h, ids.ids[i], ids.lens[i], owners.ids, owners.lens, (size_t)n, 1.0,
                          1e9, fences, NULL);
    t += now_s() - t0;
    if (rc != LEASE_OK) break;
    for (k = 0; k < n; k++) won += fences[k] != 0;
    if (won != 1) {
      rc = REFUSED;
      break;
    }
  }
  free(fences);
  ids_free(&owners);
  if (i < ids.n) return op_error(L, b, "claim_many", rc, &ids);
  ids_free(&ids);
  lua_pushnumber(L, t);
  return 1;
}

/*
** b:claim_seq(prefix, nowners, calls) -> seconds
** The baseline for claim_many: calls times, on a fresh job, nowners claims
** one after the other on this one connection (the first gets the fence,
** the rest find it held).  Timed: the claims.
*/
static int b_claim_seq(lua_State *L) {
  bdb *b = check_bdb(L);
  lua_Integer n = luaL_checkinteger(L, 3), k;
  idset ids;
  double t = 0;
  int i, rc = LEASE_OK;
  luaL_argcheck(L, n >= 1 && n <= 4096, 3, "1 to 4096 owners");
  arg_ids(L, &ids, 4);
  for (i = 0; i < ids.n; i++) {
    double t0;
    int64_t fence = 0;
    if ((rc = b->ops->enqueue(b->h, ids.ids[i], ids.lens[i])) != LEASE_OK) break;
    t0 = now_s();
    rc = b->ops->claim(b->h, ids.ids[i], ids.lens[i], 1.0, 1e9, &fence);
    for (k = 1; k < n && rc == LEASE_OK; k++) {
      int r = b->ops->claim(b->h, ids.ids[i], ids.lens[i], 1.0, 1e9, &fence);
      if (r != REFUSED) rc = r == LEASE_OK ? REFUSED : r;   /* the others must find it held */
    }
    t += now_s() - t0;
    if (rc != LEASE_OK) break;
  }
  if (i < ids.n) return op_error(L, b, "claim (sequential)", rc, &ids);
  ids_free(&ids);
  lua_pushnumber(L, t);
  return 1;
}

/* b:close() and __gc. */
static int b_close(lua_State *L) {
  bdb *b = luaL_checkudata(L, 1, BDB_MT);
  bdb_close(b);
  return 0;
}

/* Push a new bench connection: kind 1 floor, 0 C API. */
static int new_bdb(lua_State *L, int floor) {
  const char *path = luaL_checkstring(L, 1);
  int sync = check_sync(L, 2);
  bdb *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->ops = &capi_ops;
  b->h = NULL;
  luaL_setmetatable(L, BDB_MT);
  bdb_open(L, b, floor, path, sync);
  return 1;
}

/* lease_bench.floor(path, "full"|"normal") -> connection over raw SQLite. */
static int l_open_floor(lua_State *L) { return new_bdb(L, 1); }

/* lease_bench.capi(path, "full"|"normal") -> connection over lease.h. */
static int l_open_capi(lua_State *L) { return new_bdb(L, 0); }

/* ===================================================================== */
/* Threads: N pthreads, one connection each, cycles on one file           */
/* ===================================================================== */

typedef struct tshared {
  const char *path;
  const char *prefix;          /* ids are "<prefix><thread>-<i>" */
  int floor, sync, nthreads;
  double seconds;
  pthread_barrier_t start;     /* all open, then all start together */
  pthread_barrier_t alive;     /* mem_threads: all have run, RSS is read */
  pthread_barrier_t leave;
  atomic_int stop;
  int hold;                    /* mem_threads: wait at alive/leave instead of timing */
} tshared;

typedef struct tworker {
  tshared *s;
  int index;
  pthread_t tid;
  long cycles, busy, errors;
  double max_cycle;            /* the longest cycle, seconds: how long a worker can starve */
  char err[512];
} tworker;

/* One thread: open its own connection, wait for the others, then run
** cycles on its own ids until told to stop; counts cycles and failures
** (busy apart: a sound run has none).  A busy failure skips to the
** next id, as a worker would. */
static void *thread_main(void *arg) {
  tworker *w = arg;
  tshared *s = w->s;
  bdb b;
  char err[512];
  long i;
  b.ops = s->floor ? &floor_ops : &capi_ops;
  b.h = NULL;
  if (s->floor) {
    b.h = floor_open(s->path, s->sync, err, sizeof err);
  } else {
    lease_options opt;
    lease_db *db = NULL;
    lease_options_default(&opt);
    opt.synchronous = s->sync;
    if (lease_open(s->path, &opt, &db) == LEASE_OK) b.h = db;
    else {
      snprintf(err, sizeof err, "lease_open: %s", lease_errmsg(db));
      lease_close(db);
    }
  }
  if (!b.h) {
    snprintf(w->err, sizeof w->err, "%s", err);
    w->errors++;
  }
  pthread_barrier_wait(&s->start);
  for (i = 0; b.h && (s->hold ? i < 100 : !atomic_load(&s->stop)); i++) {
    char id[48];
    int64_t fence = 0;
    int rc;
    size_t len = (size_t)snprintf(id, sizeof id, "%.16s%d-%ld", s->prefix, w->index, i);
    double t0 = now_s(), t;
    rc = b.ops->enqueue(b.h, id, len);
    if (rc == LEASE_OK) rc = b.ops->claim(b.h, id, len, 1.0, 1e9, &fence);
    if (rc == LEASE_OK) rc = b.ops->complete(b.h, id, len, fence, 1.0);
    t = now_s() - t0;
    if (t > w->max_cycle) w->max_cycle = t;
    if (rc == LEASE_OK) w->cycles++;
    else if (rc == LEASE_BUSY) w->busy++;
    else {
      if (!w->err[0])
        snprintf(w->err, sizeof w->err, "%s", rc == REFUSED ? "refused by the contract"
                                                            : b.ops->errmsg(b.h));
      w->errors++;
    }
  }
  if (s->hold) {
    pthread_barrier_wait(&s->alive);
    pthread_barrier_wait(&s->leave);
  }
  bdb_close(&b);
  return NULL;
}

/* Start s->nthreads workers (w must hold that many); returns how many
** started.  The caller joins them. */
static int start_workers(tshared *s, tworker *w) {
  int i;
  for (i = 0; i < s->nthreads; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].s = s;
    w[i].index = i;
    if (pthread_create(&w[i].tid, NULL, thread_main, &w[i]) != 0) break;
  }
  return i;
}

/*
** lease_bench.threads(path, sync, nthreads, seconds, "floor"|"capi", prefix)
**   -> cycles, elapsed, busy, errors, first_error, min_cycles, max_cycle_s
** nthreads threads each open their own connection to path, start together
** and run enqueue + claim + complete cycles on their own fresh ids
** ("<prefix><thread>-<i>": give each run its own prefix) for about
** seconds; aggregate throughput is cycles / elapsed.  busy counts calls
** that failed LEASE_BUSY (past the 10 s busy timeout), errors any other
** failure (first_error says the first one).  Fairness: min_cycles is the
** fewest cycles one thread ran, max_cycle_s the longest single cycle any
** thread waited through (a starving worker could not renew its lease).
*/
static int l_threads(lua_State *L) {
  static const char *const apis[] = {"capi", "floor", NULL};
  tshared s;
  tworker *w;
  double t0, elapsed;
  long cycles = 0, busy = 0, errors = 0, min_cycles = -1;
  double max_cycle = 0;
  int i, started;
  const char *first = NULL;
  memset(&s, 0, sizeof s);
  s.path = luaL_checkstring(L, 1);
  s.sync = check_sync(L, 2);
  s.nthreads = (int)luaL_checkinteger(L, 3);
  s.seconds = luaL_checknumber(L, 4);
  s.floor = luaL_checkoption(L, 5, "capi", apis) == 1;
  s.prefix = luaL_checkstring(L, 6);
  luaL_argcheck(L, s.nthreads >= 1 && s.nthreads <= 256, 3, "1 to 256 threads");
  w = lua_newuserdatauv(L, sizeof *w * (size_t)s.nthreads, 0);
  atomic_init(&s.stop, 0);
  pthread_barrier_init(&s.start, NULL, (unsigned)s.nthreads + 1);
  started = start_workers(&s, w);
  if (started < s.nthreads) {
    /* cannot release the barrier safely with fewer parties: give up loudly */
    return luaL_error(L, "pthread_create failed after %d threads", started);
  }
  pthread_barrier_wait(&s.start);
  t0 = now_s();
  {
    struct timespec ts;
    ts.tv_sec = (time_t)s.seconds;
    ts.tv_nsec = (long)((s.seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
  }
  atomic_store(&s.stop, 1);
  for (i = 0; i < s.nthreads; i++) pthread_join(w[i].tid, NULL);
  elapsed = now_s() - t0;
  pthread_barrier_destroy(&s.start);
  for (i = 0; i < s.nthreads; i++) {
    cycles += w[i].cycles;
    busy += w[i].busy;
    errors += w[i].errors;
    if (!first && w[i].err[0]) first = w[i].err;
    if (min_cycles < 0 || w[i].cycles < min_cycles) min_cycles = w[i].cycles;
    if (w[i].max_cycle > max_cycle) max_cycle = w[i].max_cycle;
  }
  lua_pushinteger(L, cycles);
  lua_pushnumber(L, elapsed);
  lua_pushinteger(L, busy);
  lua_pushinteger(L, errors);
  if (first) lua_pushstring(L, first);
  else lua_pushnil(L);
  lua_pushinteger(L, min_cycles);
  lua_pushnumber(L, max_cycle);
  return 7;
}

/*
** lease_bench.mem_threads(path, nthreads, prefix) -> rss_before_kb, rss_alive_kb, errors
** Starts nthreads C threads, each with its own lease handle that has run
** 100 cycles, and reads VmRSS while all are alive (before they close):
** (alive - before) / nthreads is the memory of one thread with its handle.
*/
static int l_mem_threads(lua_State *L) {
  tshared s;
  tworker *w;
  long rss0, rss1, hwm;
  long errors = 0;
  int i;
  memset(&s, 0, sizeof s);
  s.path = luaL_checkstring(L, 1);
  s.nthreads = (int)luaL_checkinteger(L, 2);
  s.prefix = luaL_checkstring(L, 3);
  s.sync = LEASE_SYNC_NORMAL;
  s.hold = 1;
  luaL_argcheck(L, s.nthreads >= 1 && s.nthreads <= 256, 2, "1 to 256 threads");
  w = lua_newuserdatauv(L, sizeof *w * (size_t)s.nthreads, 0);
  atomic_init(&s.stop, 0);
  pthread_barrier_init(&s.start, NULL, (unsigned)s.nthreads + 1);
  pthread_barrier_init(&s.alive, NULL, (unsigned)s.nthreads + 1);
  pthread_barrier_init(&s.leave, NULL, (unsigned)s.nthreads + 1);
  read_rss(&rss0, &hwm);
  if (start_workers(&s, w) < s.nthreads) return luaL_error(L, "pthread_create failed");
  pthread_barrier_wait(&s.start);
  pthread_barrier_wait(&s.alive);
  read_rss(&rss1, &hwm);
  pthread_barrier_wait(&s.leave);
  for (i = 0; i < s.nthreads; i++) {
    pthread_join(w[i].tid, NULL);
    errors += w[i].errors + w[i].busy;
  }
  pthread_barrier_destroy(&s.start);
  pthread_barrier_destroy(&s.alive);
  pthread_barrier_destroy(&s.leave);
  lua_pushinteger(L, rss0);
  lua_pushinteger(L, rss1);
  lua_pushinteger(L, errors);
  return 3;
}

/* ===================================================================== */
/* Module                                                                 */
/* ===================================================================== */

/* lease_bench.clock() -> seconds on the monotonic clock. */
static int l_clock(lua_State *L) {
  lua_pushnumber(L, now_s());
  return 1;
}

/* lease_bench.cpu() -> seconds of CPU time this process has used. */
static int l_cpu(lua_State *L) {
  lua_pushnumber(L, cpu_s());
  return 1;
}

/* lease_bench.rss() -> VmRSS_kb, VmHWM_kb of this process. */
static int l_rss(lua_State *L) {
  long rss, hwm;
  read_rss(&rss, &hwm);
  lua_pushinteger(L, rss);
  lua_pushinteger(L, hwm);
  return 2;
}

/* lease_bench.sqlite_version() -> the SQLite library's version string. */
static int l_sqlite_version(lua_State *L) {
  lua_pushstring(L, sqlite3_libversion());
  return 1;
}

static const luaL_Reg bdb_methods[] = {
  {"cycle", b_cycle},
  {"qcycle", b_qcycle},
  {"renew", b_renew},
  {"fill", b_fill},
  {"claim_next", b_claim_next},
  {"batch", b_batch},
  {"fused", b_fused},
  {"claim_many", b_claim_many},
  {"claim_seq", b_claim_seq},
  {"close", b_close},
  {NULL, NULL},
};

static const luaL_Reg module_funcs[] = {
  {"floor", l_open_floor},
  {"capi", l_open_capi},
  {"threads", l_threads},
  {"mem_threads", l_mem_threads},
  {"clock", l_clock},
  {"cpu", l_cpu},
  {"rss", l_rss},
  {"sqlite_version", l_sqlite_version},
  {NULL, NULL},
};

/*
** Keep glibc from trimming the heap for the rest of the process.  By
** default free() hands the top of the heap back to the kernel once more
** than 128 KiB lies free there, and the next malloc() takes it back and
** faults its pages in again.  A connection whose transaction frees its
** page cache's block at the top of the heap then pays a brk() pair and
** dozens of page faults per transaction, and another does not, by where
** the process's longer-lived allocations happen to lie: a cost of the
** allocator, not of the SQL, that would strike the floor and the engine
** unequally.  Returns whether the setting took (always 1 on other C
** libraries, whose allocators this does not touch).
*/
static int pin_heap(void) {
#ifdef __GLIBC__
  return mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024) == 1;
#else
  return 1;
#endif
}

/* require "lease_bench".  Pins the heap (pin_heap); the module's
** heap_pinned field says whether that took. */
LEASE_API int luaopen_lease_bench(lua_State *L) {
  int pinned = pin_heap();
  luaL_newmetatable(L, BDB_MT);
  lua_pushcfunction(L, b_close);
  lua_setfield(L, -2, "__gc");
  luaL_newlib(L, bdb_methods);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_newlib(L, module_funcs);
  lua_pushboolean(L, pinned);
  lua_setfield(L, -2, "heap_pinned");
  return 1;
}
