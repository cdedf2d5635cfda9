/*
** lsq_queue.c: the job queue in the SQLite backend (lease.h, "The job
** queue"; the SQL and the schema's layout: lsq_queue_sql.h).  Arguments
** arrive checked and resolved by the core (src/core/lease_queue.c).  Every
** write runs as a body inside lsq_write_txn, as the contract's writes do;
** every write that changes a job under a lease (claim, fail) goes through
** a guarded UPDATE that checks owner, fence, done and until when it stores.
*/
#include "lsq.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Bind a time, SQL NULL for NaN (no time). */
static void bind_time(sqlite3_stmt *st, int i, double t) {
  if (isnan(t)) sqlite3_bind_null(st, i);
  else sqlite3_bind_double(st, i, t);
}

/* Step st, which returns no row, and reset it.  LEASE_OK or the failure. */
static int run_once(lease_db *db, sqlite3_stmt *st) {
  int src = sqlite3_step(st);
  if (src != SQLITE_DONE) return lsq_step_failed(db, st, src);
  sqlite3_reset(st);
  return LEASE_OK;
}

/* Step st, a write of the row of job id that the caller's transaction
** read (id NULL: the row `what` names whole), as run_once; then
** LEASE_MISMATCH recorded unless it changed that one row: another
** client's trigger skipped it (RAISE(IGNORE)) or the row is not there.
** `what` names the write up to the id (lease__skipped).  The caller's
** transaction rolls back. */
static int run_one(lease_db *db, sqlite3_stmt *st, const char *what, const char *id,
                   size_t id_len) {
  int rc = run_once(db, st);
  if (rc != LEASE_OK || sqlite3_changes(LSQ(db)->sql) == 1) return rc;
  return lease__skipped(db, what, id, id_len);
}

/* End a read outside any transaction (as lsq_ops.c's finish_read). */
static int finish_read(lease_db *db, sqlite3_stmt *st, int src) {
  if (src != SQLITE_DONE) lsq_fail(db, LSQ(db)->sql, src);
  sqlite3_reset(st);
  return src == SQLITE_DONE ? LEASE_OK : db->rc;
}

/* Append n bytes at p to db->buf at *used (NUL-terminated); returns the
** offset + 1 (0 for p NULL), or 0 with LEASE_NOMEM recorded (*failed). */
static size_t keep_bytes(lease_db *db, const void *p, size_t n, size_t *used, int *failed) {
  size_t at = *used;
  if (!p) return 0;
  if (lease__reserve(db, at + n + 1) != LEASE_OK) {
    *failed = 1;
    return 0;
  }
  if (n) memcpy(db->buf + at, p, n);
  db->buf[at + n] = '\0';
  *used = at + n + 1;
  return at + 1;
}

/* The pointer for an offset from keep_bytes (0: NULL). */
static const char *kept(lease_db *db, size_t off) { return off ? db->buf + off - 1 : NULL; }

/* ===================================================================== */
/* The schema                                                             */
/* ===================================================================== */

/* The attempts a job claimed at `fence` has made, counted from base_fence
** as LSQ_SQL_ATTEMPT counts them: 0 when the fence is not above it (another
** client lowered the fence, or wrote base_fence), INT64_MAX when the
** difference is larger. */
static int64_t attempts_since(int64_t fence, int64_t base_fence) {
  if (fence <= base_fence) return 0;
  if (base_fence < 0 && fence > INT64_MAX + base_fence) return INT64_MAX;
  return fence - base_fence;
}

/* The clock mark into *mark (NAN: none, or a value that is no number).
** LEASE_OK or the failure recorded. */
static int clock_read(lease_db *db, double *mark) {
  sqlite3_stmt *st;
  int src;
  *mark = NAN;
  if (!(st = lsq_stmt(db, LSQ_ST_CLOCK_READ))) return db->rc;
  src = sqlite3_step(st);
  if (src != SQLITE_ROW) return lsq_step_failed(db, st, src);
  if (sqlite3_column_type(st, 0) == SQLITE_FLOAT || sqlite3_column_type(st, 0) == SQLITE_INTEGER)
    *mark = sqlite3_column_double(st, 0);
  sqlite3_reset(st);
  return LEASE_OK;
}

/* See lsq.h. */
int lsq_clock(lease_db *db) {
  sqlite3_stmt *mv;
  double mark;
  int move, rc;
  if (!lease__clock_due(db, LSQ(db)->version)) return LEASE_OK;
  if ((rc = clock_read(db, &mark)) != LEASE_OK) return rc;
  if ((rc = lease__clock(db, mark, &move)) != LEASE_OK || !move) return rc;
  if (!(mv = lsq_stmt(db, LSQ_ST_CLOCK_MOVE))) return db->rc;
  sqlite3_bind_double(mv, 1, db->clock_now);
  return run_once(db, mv);
}

/* See lsq.h. */
int lsq_clock_checked(lease_db *db) {
  double mark;
  int move, rc;
  if (!lease__clock_due(db, LSQ(db)->version)) return LEASE_OK;
  if ((rc = clock_read(db, &mark)) != LEASE_OK) return rc;
  return lease__clock(db, mark, &move);
}

/* See lsq.h. */
int lsq_q_temp(lease_db *db) {
  int rc = lsq_exec(db, LSQ_SQL_QUEUE_TABLE("TEMP "));
  if (rc == LEASE_OK) rc = lsq_exec(db, LSQ_SQL_ERRORS_TABLE("TEMP "));
  return rc;
}

/* See lsq.h. */
int lsq_q_key_view(lease_db *db) { return lsq_exec(db, LSQ_SQL_QUEUE_KEY_VIEW); }

/* See lsq.h. */
int lsq_q_control_temp(lease_db *db) {
  int rc = lsq_exec(db, LSQ_SQL_QUEUES_TABLE("TEMP "));
  if (rc == LEASE_OK) rc = lsq_exec(db, LSQ_SQL_CLAIMS_TABLE("TEMP "));
  return rc;
}

/* ===================================================================== */
/* Steps shared with the contract's writes                                */
/* ===================================================================== */

/* See lsq.h. */
int lsq_q_expired(lease_db *db, const lease__write *w) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_EXPIRED), *add = lsq_stmt(db, LSQ_ST_Q_ERROR_ADD);
  sqlite3_stmt *end = lsq_stmt(db, LSQ_ST_Q_END);
  lease__fail_facts f = {0, 0, w->now, 0, 0, 0};
  lease__next next;
  lease__event ev;
  int src, rc;
  if (!st || !add || !end) return db->rc;
  lsq_bind_bytes(st, 1, w->id, w->id_len);
  sqlite3_bind_double(st, 2, w->now);
  src = sqlite3_step(st);
  if (src == SQLITE_DONE) {
    sqlite3_reset(st);
    return LEASE_OK;
  }
  if (src != SQLITE_ROW) return lsq_step_failed(db, st, src);
  f.attempt = sqlite3_column_int64(st, 3);
  f.max_attempts = sqlite3_column_int64(st, 4);
  memset(&ev, 0, sizeof ev);
  ev.op = LEASE_EV_EXPIRE;
  ev.id = w->id;
  ev.id_len = w->id_len;
  ev.at = w->now;
  ev.has_fence = 1;
  ev.fence = sqlite3_column_int64(st, 1);
  ev.reason = LEASE_GRANTED;
  lsq_bind_bytes(add, 1, w->id, w->id_len);
  sqlite3_bind_int64(add, 2, f.attempt);
  sqlite3_bind_value(add, 3, sqlite3_column_value(st, 2));   /* at: when it expired */
  sqlite3_bind_value(add, 4, sqlite3_column_value(st, 0));   /* bound as copies */
  sqlite3_bind_value(add, 5, sqlite3_column_value(st, 1));
  sqlite3_bind_text(add, 6, "lease expired", -1, SQLITE_STATIC);
  rc = run_one(db, add, "a claim's error record of", w->id, w->id_len);
  if (rc == LEASE_OK) {   /* the expired lease's owner, in the ledger: a copy, st is reset next */
    const unsigned char *o = sqlite3_column_text(st, 0);
    size_t n = o ? (size_t)sqlite3_column_bytes(st, 0) : 0;
    char small[256], *copy = n < sizeof small ? small : malloc(n + 1);
    if (!copy) rc = lease__fail(db, LEASE_NOMEM, "out of memory");
    else {
      if (o) memcpy(copy, o, n);
      ev.owner = o ? copy : NULL;
      ev.owner_len = n;
      rc = lease__event_add(db, &ev);
      if (copy != small) free(copy);
    }
  }
  sqlite3_reset(st);
  if (rc != LEASE_OK) return rc;
  lease__after_expiry(&f, &next);
  if (next.qstate == LEASE__Q_OPEN) return LEASE_OK;   /* the claim goes on */
  lsq_bind_bytes(end, 1, w->id, w->id_len);
  sqlite3_bind_int(end, 2, next.qstate);
  sqlite3_bind_double(end, 3, next.finished_at);
  if ((rc = run_one(db, end, "a claim's discard of", w->id, w->id_len)) != LEASE_OK) return rc;
  LSQ(db)->expiry_discards++;
  rc = lease__event_id(db, LEASE_EV_DISCARD, w->id, w->id_len, w->now, LEASE_GRANTED);
  if (rc != LEASE_OK) return rc;
  return lsq_q_cascade(db, w->id, w->id_len, LEASE__Q_DISCARDED, w->now);
}

/* See lsq.h. */
int lsq_q_release(lease_db *db, const lease__write *w) {
  sqlite3_stmt *st;
  int src;
  if (LSQ(db)->no_deps) return LEASE_OK;
  if (!(st = lsq_stmt(db, LSQ_ST_Q_DEP_CHILD))) return db->rc;
  lsq_bind_bytes(st, 1, w->id, w->id_len);   /* the UPDATE only for a job with children */
  src = sqlite3_step(st);
  if (src != SQLITE_ROW && src != SQLITE_DONE) return lsq_step_failed(db, st, src);
  sqlite3_reset(st);
  if (src == SQLITE_DONE) return LEASE_OK;
  if (!(st = lsq_stmt(db, LSQ_ST_Q_DEP_RELEASE))) return db->rc;
  lsq_bind_bytes(st, 1, w->id, w->id_len);
  return run_once(db, st);
}

/* See lsq.h. */
int lsq_q_give_back(lease_db *db, const lease__write *w) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_GIVE_BACK);
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, w->id, w->id_len);
  return run_once(db, st);
}

/* See lsq.h. */
int lsq_q_deps_none(lease_db *db, int *none) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_DEPS_ANY);
  int src;
  if (!st) return db->rc;
  src = sqlite3_step(st);
  if (src != SQLITE_ROW && src != SQLITE_DONE) return lsq_step_failed(db, st, src);
  *none = src == SQLITE_DONE;
  sqlite3_reset(st);
  return LEASE_OK;
}

/* See lsq.h. */
int lsq_q_cascade(lease_db *db, const char *id, size_t id_len, int qstate, double now) {
  sqlite3_stmt *err = lsq_stmt(db, LSQ_ST_Q_DEP_ERRORS), *end = lsq_stmt(db, LSQ_ST_Q_DEP_CANCEL);
  const char *word = qstate == LEASE__Q_DISCARDED ? "discarded" : "cancelled";
  int rc;
  if (!err || !end) return db->rc;
  if (lease__events_on(db)) {
    sqlite3_stmt *ev = lsq_stmt(db, LSQ_ST_Q_DEP_EVENTS);
    if (!ev) return db->rc;
    lsq_bind_bytes(ev, 1, id, id_len);
    sqlite3_bind_double(ev, 3, now);
    if ((rc = run_once(db, ev)) != LEASE_OK) return rc;
  }
  lsq_bind_bytes(err, 1, id, id_len);
  sqlite3_bind_text(err, 2, word, -1, SQLITE_STATIC);
  sqlite3_bind_double(err, 3, now);
  if ((rc = run_once(db, err)) != LEASE_OK) return rc;
  lsq_bind_bytes(end, 1, id, id_len);
  sqlite3_bind_double(end, 3, now);
  return run_once(db, end);
}

/* ===================================================================== */
/* Enqueue                                                                */
/* ===================================================================== */

/* 1 when job carries data beyond the defaults a trigger gives. */
static int has_data(const lease_new_job *j) {
  return j->payload || j->key || j->queue_len != 7 || memcmp(j->queue, "default", 7) != 0 ||
         j->priority != 0 || j->has_run_at || j->max_attempts != LEASE_MAX_ATTEMPTS_DEFAULT ||
         j->timeout != 0;
}

typedef struct enqueue_ctx {
  const lease_new_job *jobs;
  int n, added;
} enqueue_ctx;

/* The job holding j's key (LSQ_SQL_Q_KEY_HOLDER), in the write
** transaction: *held 1 and its id recorded (lease__duplicate) when there
** is one, else 0. */
static int key_holder(lease_db *db, const lease_new_job *j, int *held) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_KEY_HOLDER);
  int src, rc = LEASE_OK;
  *held = 0;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, j->queue, j->queue_len);
  lsq_bind_bytes(st, 2, j->key, j->key_len);
  lsq_bind_bytes(st, 3, j->id, j->id_len);
  src = sqlite3_step(st);
  if (src == SQLITE_ROW) {
    *held = 1;
    rc = lease__duplicate(db, (const char *)sqlite3_column_text(st, 0),
                          (size_t)sqlite3_column_bytes(st, 0));
  } else if (src != SQLITE_DONE) {
    return lsq_step_failed(db, st, src);
  }
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);   /* drop the pointers to the caller's bytes */
  return rc;
}

/* Before anything is written: every job the jobs list in after must
** exist (or, not there yet, come earlier in the batch) and not be
** discarded or cancelled; else lease__refuse_dep records which, and
** *refused is 1. */
static int check_deps(lease_db *db, const enqueue_ctx *e, int *refused) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_DEP_STATE);
  int i, k, src;
  *refused = 0;
  if (!st) return db->rc;
  for (i = 0; i < e->n; i++) {
    const lease_new_job *j = &e->jobs[i];
    for (k = 0; k < j->n_after; k++) {
      int found, state = 0;
      lsq_bind_bytes(st, 1, j->after[k], j->after_lens[k]);
      src = sqlite3_step(st);
      if (src != SQLITE_ROW && src != SQLITE_DONE) return lsq_step_failed(db, st, src);
      found = src == SQLITE_ROW;
      if (found) state = sqlite3_column_int(st, 0);
      sqlite3_reset(st);
      if (!found && lease__dep_in_batch(e->jobs, i, k) >= 0) continue;
      if ((*refused = lease__refuse_dep(db, i, k, found, state))) return LEASE_OK;
    }
  }
  return LEASE_OK;
}

/* Bind a dependency's arguments to st (LSQ_SQL_Q_DEP_ADD's and
** LSQ_SQL_Q_DEP_THERE's): job i of the batch runs after its k-th listed
** job (lease__dep_in_batch says which entry of the batch stands for it). */
static void bind_dep(sqlite3_stmt *st, const enqueue_ctx *e, int i, int k) {
  const lease_new_job *j = &e->jobs[i];
  int m;
  sqlite3_clear_bindings(st);
  lsq_bind_bytes(st, 1, j->id, j->id_len);
  lsq_bind_bytes(st, 2, j->after[k], j->after_lens[k]);
  if ((m = lease__dep_in_batch(e->jobs, i, k)) >= 0 && e->jobs[m].key) {
    lsq_bind_bytes(st, 3, e->jobs[m].queue, e->jobs[m].queue_len);
    lsq_bind_bytes(st, 4, e->jobs[m].key, e->jobs[m].key_len);
  }
}

/* After a DEP_WAIT of job id that changed no row: LEASE_OK unless the job
** is open with a parent not completed (LSQ_SQL_Q_DEP_UNWAITED): then
** another client's trigger skipped the wait, and `what` names it. */
static int wait_written(lease_db *db, const char *what, const char *id, size_t id_len) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_DEP_UNWAITED);
  int unwaited, rc;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, id, id_len);
  if ((rc = lsq_found_row(db, st, &unwaited)) != LEASE_OK) return rc;
  return unwaited ? lease__skipped(db, what, id, id_len) : LEASE_OK;
}

/* Store the dependencies of job i of the batch; it waits while one is not
** completed.  An edge's insert that changed no row must find the edge
** there (the same job listed twice), and a wait that changed none must
** be one not needed (wait_written): else another client's trigger
** skipped it, a failure. */
static int add_deps(lease_db *db, const enqueue_ctx *e, int i) {
  sqlite3_stmt *add = lsq_stmt(db, LSQ_ST_Q_DEP_ADD), *wait = lsq_stmt(db, LSQ_ST_Q_DEP_WAIT),
               *there = lsq_stmt(db, LSQ_ST_Q_DEP_THERE);
  const lease_new_job *j = &e->jobs[i];
  int k, rc, found;
  if (!add || !wait || !there) return db->rc;
  for (k = 0; k < j->n_after; k++) {
    bind_dep(add, e, i, k);
    rc = run_once(db, add);
    sqlite3_clear_bindings(add);
    if (rc != LEASE_OK) return rc;
    if (sqlite3_changes(LSQ(db)->sql) == 1) continue;
    bind_dep(there, e, i, k);
    rc = lsq_found_row(db, there, &found);
    sqlite3_clear_bindings(there);
    if (rc == LEASE_OK && !found) rc = lease__skipped(db, "enqueue's dependency of", j->id, j->id_len);
    if (rc != LEASE_OK) return rc;
  }
  lsq_bind_bytes(wait, 1, j->id, j->id_len);
  if ((rc = run_once(db, wait)) != LEASE_OK || sqlite3_changes(LSQ(db)->sql) == 1) return rc;
  return wait_written(db, "enqueue's wait of", j->id, j->id_len);
}

/* Read the database's fence floor (LSQ_SQL_Q_FLOOR) into *floor: 0 when
** it has none, or on a file before step CLOCK, which has no lease_meta
** (only a handle that may not write is left at such a version). */
static int read_floor(lease_db *db, sqlite3_int64 *floor) {
  sqlite3_stmt *st;
  int src;
  *floor = 0;
  if (!LEASE_SCHEMA_HAS(LSQ(db)->version, CLOCK)) return LEASE_OK;
  if (!(st = lsq_stmt(db, LSQ_ST_Q_FLOOR))) return db->rc;
  src = sqlite3_step(st);
  if (src == SQLITE_ROW) {
    *floor = sqlite3_column_int64(st, 0);
    src = sqlite3_step(st);
  }
  if (src != SQLITE_DONE) return lsq_step_failed(db, st, src);
  sqlite3_reset(st);
  return LEASE_OK;
}

/* After an enqueue's INSERT OR IGNORE of id that added no row, inside its
** transaction: LEASE_OK when the id is there (the job exists), else
** LEASE_MISMATCH recorded (another client's trigger skipped the insert,
** or a constraint it added refused the row). */
static int insert_ignored(lease_db *db, const char *id, size_t id_len) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_INFO);
  int there, rc;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, id, id_len);
  sqlite3_bind_double(st, 2, 0);
  if ((rc = lsq_found_row(db, st, &there)) != LEASE_OK) return rc;
  if (there) return LEASE_OK;
  return lease__skipped(db, "enqueue of", id, id_len);
}

/* Into *foreign, inside the caller's write transaction, whether the file
** has a trigger another client made, or lacks lease_jobs_enqueued
** (LSQ_SQL_Q_FOREIGN_TRIGGERS): read again only when the schema cookie
** (LSQ_SQL_Q_SCHEMA_COOKIE) is not the one the last read was made under.
** Every change of the schema moves the cookie, whoever makes it; a read
** made under a change of this connection's own transaction (a limit
** makes or drops an index) is forgotten when that transaction is given
** up (lsq_rollback), since the cookie it was read under may come back
** with another change. */
static int foreign_triggers(lease_db *db, int *foreign) {
  lsq_conn *c = LSQ(db);
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_SCHEMA_COOKIE);
  int src, cookie, rc, found;
  if (!st) return db->rc;
  if ((src = sqlite3_step(st)) != SQLITE_ROW) return lsq_step_failed(db, st, src);
  cookie = sqlite3_column_int(st, 0);
  sqlite3_reset(st);
  if (!c->triggers_known || c->triggers_cookie != cookie) {
    if (!(st = lsq_stmt(db, LSQ_ST_Q_FOREIGN_TRIGGERS))) return db->rc;
    if ((rc = lsq_found_row(db, st, &found)) != LEASE_OK) return rc;
    c->triggers_foreign = found;
    c->triggers_cookie = cookie;
    c->triggers_known = 1;
  }
  *foreign = c->triggers_foreign;
  return LEASE_OK;
}

/* After an enqueue's inserts, the first at rowid first: LEASE_OK when
** each job inserted has its queue row (LSQ_SQL_Q_UNQUEUED, looked for
** only when foreign_triggers finds a trigger that could skip one), else
** another client's trigger skipped it (the job would never be claimed):
** LEASE_MISMATCH recorded, naming the first such job. */
static int all_queued(lease_db *db, sqlite3_int64 first) {
  sqlite3_stmt *st;
  int src, foreign = 1, rc;
  if ((rc = foreign_triggers(db, &foreign)) != LEASE_OK || !foreign) return rc;
  if (!(st = lsq_stmt(db, LSQ_ST_Q_UNQUEUED))) return db->rc;
  sqlite3_bind_int64(st, 1, first);
  src = sqlite3_step(st);
  if (src == SQLITE_ROW)
    rc = lease__skipped(db, "enqueue's queue row of", (const char *)sqlite3_column_text(st, 0),
                        (size_t)sqlite3_column_bytes(st, 0));
  else if (src != SQLITE_DONE)
    return lsq_step_failed(db, st, src);
  sqlite3_reset(st);
  return rc;
}

/* Write body: once every job's dependencies are checked (a refused one
** stores nothing), insert each job unless its id exists (contract step 2)
** or an unfinished job of its queue holds its key, then store its data
** and dependencies beside it.  The key's holder is read in this write
** transaction, which no other writer shares; lease_queue_key refuses a
** second one anyway.  Each job starts at the fence floor, read once: no
** other writer can raise it meanwhile.  Each job's outcome goes to the
** ledger; an insert that added no row for an id not there fails
** (insert_ignored), and so does a job inserted without its queue row
** (all_queued). */
static int enqueue_body(lease_db *db, void *ctx) {
  enqueue_ctx *e = ctx;
  sqlite3_stmt *ins = lsq_stmt(db, LSQ_ST_ENQUEUE), *data = lsq_stmt(db, LSQ_ST_Q_DATA);
  sqlite3_int64 floor, first = 0;
  int i, rc, held, refused;
  e->added = 0;   /* the jobs this run inserts: all_queued checks them */
  if (!ins || !data) return db->rc;
  if ((rc = check_deps(db, e, &refused)) != LEASE_OK || refused) return rc;
  if ((rc = read_floor(db, &floor)) != LEASE_OK) return rc;
  sqlite3_bind_int64(ins, 2, floor);
  for (i = 0; i < e->n; i++) {
    const lease_new_job *j = &e->jobs[i];
    if (j->key && (rc = key_holder(db, j, &held)) != LEASE_OK) return rc;
    if (j->key && held) {
      if ((rc = lease__event_id(db, LEASE_EV_ENQUEUE, j->id, j->id_len, NAN, LEASE_DUPLICATE)))
        return rc;
      continue;
    }
    lsq_bind_bytes(ins, 1, j->id, j->id_len);
    if ((rc = run_once(db, ins)) != LEASE_OK) return rc;
    if (sqlite3_changes(LSQ(db)->sql) != 1) {
      if ((rc = insert_ignored(db, j->id, j->id_len)) != LEASE_OK) return rc;
      if ((rc = lease__event_id(db, LEASE_EV_ENQUEUE, j->id, j->id_len, NAN, LEASE_EXISTS)))
        return rc;
      continue;
    }
    if (!e->added) first = sqlite3_last_insert_rowid(LSQ(db)->sql);
    if ((rc = lease__event_id(db, LEASE_EV_ENQUEUE, j->id, j->id_len, NAN, LEASE_GRANTED)))
      return rc;
    e->added++;
    if (j->n_after > 0 && (rc = add_deps(db, e, i)) != LEASE_OK) return rc;
    if (!has_data(j)) continue;
    lsq_bind_bytes(data, 1, j->id, j->id_len);
    if (j->payload) sqlite3_bind_blob(data, 2, j->payload, (int)j->payload_len, SQLITE_STATIC);
    else sqlite3_bind_null(data, 2);
    lsq_bind_bytes(data, 3, j->queue, j->queue_len);
    sqlite3_bind_int64(data, 4, j->priority);
    if (j->has_run_at) sqlite3_bind_double(data, 5, j->run_at);
    else sqlite3_bind_null(data, 5);
    sqlite3_bind_int64(data, 6, j->max_attempts);
    if (j->timeout != 0) sqlite3_bind_double(data, 7, j->timeout);
    else sqlite3_bind_null(data, 7);
    if (j->key) lsq_bind_bytes(data, 8, j->key, j->key_len);
    else sqlite3_bind_null(data, 8);
    rc = run_one(db, data, "enqueue's queue data of", j->id, j->id_len);
    sqlite3_clear_bindings(data);   /* drop the pointers to the caller's bytes */
    if (rc != LEASE_OK) return rc;
  }
  return e->added ? all_queued(db, first) : LEASE_OK;
}

/* See lsq.h. */
int lsq_q_enqueue_in(lease_db *db, const lease_new_job *jobs, int n, int *added) {
  enqueue_ctx e = {jobs, n, 0};
  int rc = enqueue_body(db, &e);
  *added = e.added;
  return rc;
}

/* See lease.h: lease_enqueue and lease_enqueue_many.  A job without data
** costs one INSERT: its queue row is the one the trigger gives. */
int lsq_q_enqueue(lease_db *db, const lease_new_job *jobs, int n, int *inserted) {
  enqueue_ctx e = {jobs, n, 0};
  int rc = lsq_write_txn(db, enqueue_body, &e);
  if (rc == LEASE_OK && inserted) *inserted = e.added;
  return rc;
}

/* ===================================================================== */
/* Reads                                                                  */
/* ===================================================================== */

/* Read job id's timeout into *timeout (0: none, or a file older than step
** TIMEOUT, whose lease_queue has no such column). */
static int read_timeout(lease_db *db, const char *id, size_t id_len, double *timeout) {
  sqlite3_stmt *st;
  int src;
  *timeout = 0;
  if (!LEASE_SCHEMA_HAS(LSQ(db)->version, TIMEOUT)) return LEASE_OK;
  if (!(st = lsq_stmt(db, LSQ_ST_Q_TIMEOUT))) return db->rc;
  lsq_bind_bytes(st, 1, id, id_len);
  src = lsq_step(db, LSQ(db)->sql, st);
  if (src == SQLITE_ROW) {
    if (sqlite3_column_type(st, 0) != SQLITE_NULL) *timeout = sqlite3_column_double(st, 0);
    src = sqlite3_step(st);
  }
  return finish_read(db, st, src);
}

/* See lease.h: lease_state (now NaN: bound as NULL, the status unknown);
** the timeout read after the row. */
int lsq_q_state(lease_db *db, const char *id, size_t id_len, double now, lease_row *row,
                int *found) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_STATE);
  size_t used = 0;
  int src, rc;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, id, id_len);
  if (isnan(now)) sqlite3_bind_null(st, 2);
  else sqlite3_bind_double(st, 2, now);
  src = lsq_step(db, LSQ(db)->sql, st);
  if (src == SQLITE_ROW) {
    if (lsq_copy_row(db, st, 0, row, &used) != LEASE_OK) {
      sqlite3_reset(st);
      return db->rc;
    }
    lsq_fix_row(db, row);
    *found = 1;
    src = sqlite3_step(st);
  }
  if (src != SQLITE_DONE) *found = 0;
  rc = finish_read(db, st, src);
  if (rc == LEASE_OK && *found) rc = read_timeout(db, id, id_len, &row->timeout);
  return rc;
}

/* See lease.h: lease_list. */
int lsq_q_list(lease_db *db, const lease_filter *f, int max, lease_row *rows, int *count) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_LIST);
  size_t used = 0;
  int src, n = 0, i;
  if (!st) return db->rc;
  sqlite3_bind_int64(st, 1, f->after);
  sqlite3_bind_double(st, 2, f->now);
  sqlite3_bind_int(st, 3, max);
  sqlite3_bind_int(st, 4, f->status);
  if (f->queue) lsq_bind_bytes(st, 5, f->queue, f->queue_len);
  else sqlite3_bind_null(st, 5);
  sqlite3_bind_int(st, 6, f->results != 0);
  sqlite3_bind_int(st, 7, f->which);
  src = lsq_step(db, LSQ(db)->sql, st);
  while (src == SQLITE_ROW && n < max) {
    if (lsq_copy_row(db, st, 0, &rows[n], &used) != LEASE_OK) {
      sqlite3_reset(st);
      return db->rc;
    }
    n++;
    src = sqlite3_step(st);
  }
  if (src == SQLITE_ROW) src = SQLITE_DONE;
  if (finish_read(db, st, src) != LEASE_OK) return db->rc;
  for (i = 0; i < n; i++) lsq_fix_row(db, &rows[i]);
  *count = n;
  return LEASE_OK;
}

/* See lease.h: lease_errors. */
int lsq_q_errors(lease_db *db, const char *id, size_t id_len, lease_job_error *out, int max,
                     int *count) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_ERRORS);
  size_t used = 0;
  int src, n = 0, i, failed = 0;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, id, id_len);
  sqlite3_bind_int(st, 2, max);
  src = lsq_step(db, LSQ(db)->sql, st);
  while (src == SQLITE_ROW && n < max && !failed) {
    lease_job_error *e = &out[n++];
    const void *owner = sqlite3_column_text(st, 2), *msg = sqlite3_column_blob(st, 4);
    e->attempt = sqlite3_column_int64(st, 0);
    e->at = sqlite3_column_double(st, 1);
    e->owner_len = owner ? (size_t)sqlite3_column_bytes(st, 2) : 0;
    e->owner = (const char *)(uintptr_t)keep_bytes(db, owner, e->owner_len, &used, &failed);
    if (!msg && sqlite3_column_type(st, 4) != SQLITE_NULL) msg = "";
    e->message_len = msg ? (size_t)sqlite3_column_bytes(st, 4) : 0;
    e->message = (const char *)(uintptr_t)keep_bytes(db, msg, e->message_len, &used, &failed);
    e->fence = sqlite3_column_int64(st, 3);
    src = sqlite3_step(st);
  }
  if (failed) {
    sqlite3_reset(st);
    return db->rc;
  }
  if (src == SQLITE_ROW) src = SQLITE_DONE;
  if (finish_read(db, st, src) != LEASE_OK) return db->rc;
  for (i = 0; i < n; i++) {
    out[i].owner = kept(db, (uintptr_t)out[i].owner);
    out[i].message = kept(db, (uintptr_t)out[i].message);
  }
  *count = n;
  return LEASE_OK;
}

/* See lease.h: lease_after.  A file from before dependencies has none. */
int lsq_q_after(lease_db *db, const char *id, size_t id_len, double now, lease_dep *out, int max,
                int *count) {
  sqlite3_stmt *st;
  size_t used = 0;
  int src, n = 0, i, failed = 0;
  if (!LEASE_SCHEMA_HAS(LSQ(db)->version, DEPS)) return LEASE_OK;
  if (!(st = lsq_stmt(db, LSQ_ST_Q_DEPS))) return db->rc;
  lsq_bind_bytes(st, 1, id, id_len);
  sqlite3_bind_double(st, 2, now);
  sqlite3_bind_int(st, 3, max);
  src = lsq_step(db, LSQ(db)->sql, st);
  while (src == SQLITE_ROW && n < max && !failed) {
    lease_dep *d = &out[n++];
    d->id_len = (size_t)sqlite3_column_bytes(st, 0);
    d->id = (const char *)(uintptr_t)keep_bytes(db, sqlite3_column_text(st, 0), d->id_len, &used,
                                                &failed);
    d->status = sqlite3_column_int(st, 1);
    src = sqlite3_step(st);
  }
  if (failed) {
    sqlite3_reset(st);
    return db->rc;
  }
  if (src == SQLITE_ROW) src = SQLITE_DONE;
  if (finish_read(db, st, src) != LEASE_OK) return db->rc;
  for (i = 0; i < n; i++) out[i].id = kept(db, (uintptr_t)out[i].id);
  *count = n;
  return LEASE_OK;
}

/* ===================================================================== */
/* claim_next                                                             */
/* ===================================================================== */

/* A ready job found by the candidates' query: offsets into db->buf; and
** whether the bulk claim took it (taken, with its new fence). */
typedef struct candidate {
  size_t id, id_len, payload, payload_len, queue, queue_len;
  int64_t priority, base_fence, max_attempts, fence, rowid;
  double timeout;     /* 0: none */
  int taken;
} candidate;

typedef struct claim_ctx {
  const lease__write *w;
  int max, n;
  candidate *c;       /* max entries */
  lease_job *jobs;    /* max entries: the jobs taken, ids as offsets until the end */
  const lease__write *done;   /* a complete to store first, or NULL */
  int reason;                 /* its outcome */
  const lease__write *many;   /* or complete_many's w of the items to store first, or NULL */
  const lease_result *items;
  int n_items, stored;
  int *reasons;               /* n_items slots, or NULL */
  int why;                    /* the claim's refusal (lease__claim_room), or LEASE_GRANTED */
} claim_ctx;

/* Step st, which returns one integer, into *out, and reset it. */
static int read_int(lease_db *db, sqlite3_stmt *st, int64_t *out) {
  int src = sqlite3_step(st);
  if (src != SQLITE_ROW) return lsq_step_failed(db, st, src == SQLITE_DONE ? SQLITE_ERROR : src);
  *out = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  return LEASE_OK;
}

/* Read the facts of w's queue (lease__queue_facts) in the claim's
** transaction: its settings row by its key, then only what its limits
** ask: the live leases (concurrency), the claim's time and the claims
** around it (rate; those no later claim counts pruned). */
static int read_queue_facts(lease_db *db, const lease__write *w, lease__queue_facts *q) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_SETTINGS);
  int src, rc;
  memset(q, 0, sizeof *q);
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, w->queue, w->queue_len);
  src = sqlite3_step(st);
  if (src == SQLITE_DONE) {
    sqlite3_reset(st);
    return LEASE_OK;
  }
  if (src != SQLITE_ROW) return lsq_step_failed(db, st, src);
  q->found = 1;
  q->paused = sqlite3_column_int64(st, 0) != 0;
  q->concurrency = sqlite3_column_int64(st, 1);
  q->rate = sqlite3_column_int64(st, 2);
  q->per = sqlite3_column_double(st, 3);
  sqlite3_reset(st);
  if (q->paused) return LEASE_OK;
  if (q->concurrency > 0) {
    if (!(st = lsq_stmt(db, LSQ_ST_Q_LIVE))) return db->rc;
    lsq_bind_bytes(st, 1, w->queue, w->queue_len);
    sqlite3_bind_double(st, 2, w->now);
    if ((rc = read_int(db, st, &q->live)) != LEASE_OK) return rc;
  }
  if (q->rate > 0) {
    double prune;
    if (!(st = lsq_stmt(db, LSQ_ST_Q_RECENT))) return db->rc;
    lsq_bind_bytes(st, 1, w->queue, w->queue_len);
    sqlite3_bind_double(st, 2, w->now);
    sqlite3_bind_double(st, 3, q->per);
    if ((src = sqlite3_step(st)) != SQLITE_ROW)
      return lsq_step_failed(db, st, src == SQLITE_DONE ? SQLITE_ERROR : src);
    q->at = sqlite3_column_double(st, 0);
    q->recent = sqlite3_column_int64(st, 1);
    prune = sqlite3_column_double(st, 2);
    sqlite3_reset(st);
    if (!(st = lsq_stmt(db, LSQ_ST_Q_PRUNE_CLAIMS))) return db->rc;
    lsq_bind_bytes(st, 1, w->queue, w->queue_len);
    sqlite3_bind_double(st, 2, prune);
    if ((rc = run_once(db, st)) != LEASE_OK) return rc;
  }
  return LEASE_OK;
}

/* Record n jobs handed out from w's queue at the claim's time at, for its
** rate: n rows, unless another client's trigger skipped some (a rate that
** counts fewer claims than were made would let more through). */
static int record_claims(lease_db *db, const lease__write *w, double at, int n) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_RECORD_CLAIMS);
  int rc;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, w->queue, w->queue_len);
  sqlite3_bind_int(st, 3, n);
  sqlite3_bind_double(st, 4, at);
  if ((rc = run_once(db, st)) != LEASE_OK || sqlite3_changes(LSQ(db)->sql) == n) return rc;
  return lease__skipped(db, "the claims counted for the rate of queue", w->queue, w->queue_len);
}

/* Read up to `want` candidates into x->c from db->buf offset *used on.
** Returns how many, or -1 on a failure recorded. */
static int read_candidates(lease_db *db, claim_ctx *x, int want, size_t *used) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_CANDIDATES);
  int src, n = 0, failed = 0;
  if (!st) return -1;
  lsq_bind_bytes(st, 1, x->w->queue, x->w->queue_len);
  sqlite3_bind_double(st, 2, x->w->now);
  sqlite3_bind_int(st, 3, want);
  while ((src = sqlite3_step(st)) == SQLITE_ROW && n < want && !failed) {
    candidate *c = &x->c[n++];
    const void *payload = sqlite3_column_blob(st, 1);
    if (!payload && sqlite3_column_type(st, 1) != SQLITE_NULL) payload = "";
    c->id_len = (size_t)sqlite3_column_bytes(st, 0);
    c->id = keep_bytes(db, sqlite3_column_text(st, 0), c->id_len, used, &failed);
    c->payload_len = payload ? (size_t)sqlite3_column_bytes(st, 1) : 0;
    c->payload = keep_bytes(db, payload, c->payload_len, used, &failed);
    c->queue_len = (size_t)sqlite3_column_bytes(st, 2);
    c->queue = keep_bytes(db, sqlite3_column_text(st, 2), c->queue_len, used, &failed);
    c->priority = sqlite3_column_int64(st, 3);
    c->base_fence = sqlite3_column_int64(st, 4);
    c->max_attempts = sqlite3_column_int64(st, 5);
    c->timeout = sqlite3_column_type(st, 6) == SQLITE_NULL ? 0 : sqlite3_column_double(st, 6);
    c->fence = sqlite3_column_int64(st, 7);   /* claim_free's guard; claim's step sets its own */
    c->rowid = sqlite3_column_int64(st, 8);
    c->taken = 0;
  }
  if (failed) {
    sqlite3_reset(st);
    return -1;
  }
  if (src != SQLITE_DONE && src != SQLITE_ROW) {
    lsq_step_failed(db, st, src);
    return -1;
  }
  sqlite3_reset(st);
  return n;
}

/* Claim, by LSQ_SQL_Q_CLAIM_FREE (claim's guarded UPDATE, for a job that
** holds no lease), each of the n candidates just read into x->c; marks
** each one taken with its fence.  One that holds a lease is left to
** claim's own step. */
static int claim_free(lease_db *db, claim_ctx *x, int n) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_CLAIM_FREE);
  int i, src;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 2, x->w->owner, x->w->owner_len);
  sqlite3_bind_double(st, 3, x->w->now);
  sqlite3_bind_double(st, 4, x->w->until);
  for (i = 0; i < n; i++) {
    candidate *c = &x->c[i];
    lsq_bind_bytes(st, 1, kept(db, c->id), c->id_len);
    sqlite3_bind_int64(st, 5, c->fence);
    sqlite3_bind_int64(st, 6, c->rowid);
    if ((src = sqlite3_step(st)) != SQLITE_DONE) return lsq_step_failed(db, st, src);
    sqlite3_reset(st);
    if ((c->taken = sqlite3_changes(LSQ(db)->sql) == 1)) c->fence++;
  }
  return LEASE_OK;
}

/* The completions a claim_next stores first: complete_claim_next's one,
** as complete's body, or complete_many_claim_next's items, as
** complete_many's. */
static int complete_first(lease_db *db, claim_ctx *x) {
  int64_t unused;
  if (x->done) return lsq_guarded_step(db, x->done, &unused, &x->reason);
  if (x->many) return lsq_complete_each(db, x->many, x->items, x->n_items, x->reasons, &x->stored);
  return LEASE_OK;
}

/* Write body: take the ready jobs of the queue in order.  The candidates
** that hold no lease are claimed first (claim_free; a lone candidate goes
** to claim's step as the others); each other one
** (its lease ended unreported) by claim's own guarded step, which first
** counts that lease and may discard the job instead.  When some were
** discarded so, look again for as many more.  Every candidate meets
** claim's rule in this transaction, so only such a discard refuses one,
** and a discarded job leaves the index: each round that looks again has
** fewer candidates. */
static int claim_next_body(lease_db *db, void *ctx) {
  claim_ctx *x = ctx;
  lease__queue_facts qf;
  size_t used = 0;
  int want, got, i, rc, reason, room;
  x->n = 0;
  if ((rc = complete_first(db, x)) != LEASE_OK) return rc;
  if ((rc = read_queue_facts(db, x->w, &qf)) != LEASE_OK) return rc;
  db->claim_limited = qf.concurrency > 0 || qf.rate > 0;
  if ((x->why = lease__claim_room(&qf, x->max, &room)) != LEASE_GRANTED) return LEASE_OK;
  for (;;) {
    long discarded = LSQ(db)->expiry_discards;
    want = room - x->n;
    if ((got = read_candidates(db, x, want, &used)) < 0) return db->rc;
    if (got > 1 && (rc = claim_free(db, x, got)) != LEASE_OK) return rc;
    for (i = 0; i < got; i++) {
      candidate *c = &x->c[i];
      if (!c->taken) {
        lease__write one = *x->w;
        one.id = kept(db, c->id);
        one.id_len = c->id_len;
        if ((rc = lsq_guarded_step(db, &one, &c->fence, &reason)) != LEASE_OK) return rc;
        if (reason != LEASE_GRANTED) continue;
      } else {   /* claim_free took it: its event here (the others' in their step) */
        lease__write one = *x->w;
        one.id = kept(db, c->id);
        one.id_len = c->id_len;
        if ((rc = lease__event_write(db, LEASE_EV_CLAIM, &one, c->fence, LEASE_GRANTED)))
          return rc;
      }
      x->jobs[x->n].id = (const char *)(uintptr_t)c->id;
      x->jobs[x->n].id_len = c->id_len;
      x->jobs[x->n].fence = c->fence;
      x->jobs[x->n].payload = (const char *)(uintptr_t)c->payload;
      x->jobs[x->n].payload_len = c->payload_len;
      x->jobs[x->n].queue = (const char *)(uintptr_t)c->queue;
      x->jobs[x->n].queue_len = c->queue_len;
      x->jobs[x->n].priority = c->priority;
      x->jobs[x->n].attempt = attempts_since(c->fence, c->base_fence);
      x->jobs[x->n].max_attempts = c->max_attempts;
      x->jobs[x->n].timeout = c->timeout;
      x->n++;
    }
    if (LSQ(db)->expiry_discards == discarded || got == 0 || x->n == room) break;
  }
  return qf.rate > 0 && x->n > 0 ? record_claims(db, x->w, qf.at, x->n) : LEASE_OK;
}

/* claim_next of x->w (up to x->max into x->jobs), after the completions
** x names (complete_first), in one write transaction; *count: the jobs
** taken. */
static int claim_next_run(lease_db *db, claim_ctx *x, int *count) {
  int i, rc;
  x->c = malloc((size_t)x->max * sizeof *x->c);
  if (!x->c) return lease__fail(db, LEASE_NOMEM, "out of memory");
  rc = lsq_write_txn(db, claim_next_body, x);
  free(x->c);
  if (rc != LEASE_OK) return rc;
  for (i = 0; i < x->n; i++) {
    x->jobs[i].id = kept(db, (uintptr_t)x->jobs[i].id);
    x->jobs[i].payload = kept(db, (uintptr_t)x->jobs[i].payload);
    x->jobs[i].queue = kept(db, (uintptr_t)x->jobs[i].queue);
  }
  *count = x->n;
  return LEASE_OK;
}

/* A claim_ctx for claim_next of w, up to max into jobs. */
static claim_ctx claim_of(const lease__write *w, int max, lease_job *jobs) {
  claim_ctx x;
  memset(&x, 0, sizeof x);
  x.w = w;
  x.max = max;
  x.jobs = jobs;
  x.reason = LEASE_GRANTED;
  x.why = LEASE_GRANTED;
  return x;
}

/* See lsq.h. */
int lsq_q_claim_next(lease_db *db, const lease__write *w, int max, lease_job *jobs, int *count,
                     int *why) {
  claim_ctx x = claim_of(w, max, jobs);
  int rc = claim_next_run(db, &x, count);
  *why = x.why;
  return rc;
}

/* See lsq.h. */
int lsq_q_complete_claim_next(lease_db *db, const lease__write *wc, const lease__write *wn,
                              int max, lease_job *jobs, int *count, int *reason, int *why) {
  claim_ctx x = claim_of(wn, max, jobs);
  int rc;
  x.done = wc;
  rc = claim_next_run(db, &x, count);
  if (reason) *reason = x.reason;
  *why = x.why;
  return rc;
}

/* See lsq.h. */
int lsq_q_complete_many_claim_next(lease_db *db, const lease__write *wc,
                                   const lease_result *items, int n, int *reasons, int *stored,
                                   const lease__write *wn, int max, lease_job *jobs, int *count,
                                   int *why) {
  claim_ctx x = claim_of(wn, max, jobs);
  int rc;
  x.many = wc;
  x.items = items;
  x.n_items = n;
  x.reasons = reasons;
  rc = claim_next_run(db, &x, count);
  if (rc == LEASE_OK && stored) *stored = x.stored;
  *why = x.why;
  return rc;
}

/* ===================================================================== */
/* Queue control                                                          */
/* ===================================================================== */

typedef struct control_ctx {
  const char *queue;
  size_t queue_len;
  int what, paused;
  const lease_queue_limits *l;
} control_ctx;

/* Run SQL text with ?1 the queue and, from ?2 on, the int64 values v
** (0 binds NULL when nulls), then ?4 per (when l).  One statement. */
static int control_step(lease_db *db, const char *text, const control_ctx *x, int nv,
                        const int64_t *v, int nulls, const double *per) {
  sqlite3_stmt *st = NULL;
  int i, src = sqlite3_prepare_v2(LSQ(db)->sql, text, -1, &st, NULL);
  if (src != SQLITE_OK) {
    sqlite3_finalize(st);
    return lsq_fail(db, LSQ(db)->sql, src);
  }
  lsq_bind_bytes(st, 1, x->queue, x->queue_len);
  for (i = 0; i < nv; i++) {
    if (nulls && v[i] == 0) sqlite3_bind_null(st, 2 + i);
    else sqlite3_bind_int64(st, 2 + i, v[i]);
  }
  if (per) {
    if (*per > 0) sqlite3_bind_double(st, 2 + nv, *per);
    else sqlite3_bind_null(st, 2 + nv);
  }
  src = lsq_step(db, LSQ(db)->sql, st);
  if (src != SQLITE_DONE) {
    lsq_fail(db, LSQ(db)->sql, src);
    sqlite3_finalize(st);
    return db->rc;
  }
  sqlite3_finalize(st);
  return LEASE_OK;
}

/* Write body of set_queue: the row, then tidy; the live-lease index made
** while some queue has a concurrency limit, dropped when none has. */
static int control_body(lease_db *db, void *ctx) {
  control_ctx *x = ctx;
  int rc, any = 0;
  if (x->what == 0) {
    int64_t v = x->paused;
    rc = control_step(db, LSQ_SQL_Q_SET_PAUSED, x, 1, &v, 0, NULL);
  } else {
    int64_t v[2] = {x->l->concurrency, x->l->rate};
    rc = control_step(db, LSQ_SQL_Q_SET_LIMITS, x, 2, v, 1, &x->l->per);
  }
  /* the settings row inserted or updated: one row, unless a trigger skipped it */
  if (rc == LEASE_OK && sqlite3_changes(LSQ(db)->sql) != 1)
    return lease__skipped(db, "the settings of queue", x->queue, x->queue_len);
  if (rc == LEASE_OK) {
    lease__event e = {x->what ? LEASE_EV_LIMIT : x->paused ? LEASE_EV_PAUSE : LEASE_EV_RESUME,
                      NULL, 0, x->queue, x->queue_len, NULL, 0, 0, 0, NAN, LEASE_GRANTED};
    rc = lease__event_add(db, &e);
  }
  if (rc == LEASE_OK) rc = control_step(db, LSQ_SQL_Q_TIDY, x, 0, NULL, 0, NULL);
  if (rc == LEASE_OK) rc = control_step(db, LSQ_SQL_Q_TIDY_CLAIMS, x, 0, NULL, 0, NULL);
  if (rc != LEASE_OK || x->what == 0) return rc;
  rc = lsq_query(db, LSQ(db)->sql, "SELECT 1 FROM lease_queues WHERE concurrency IS NOT NULL",
                 lsq_found, &any);
  if (rc != LEASE_OK) return rc;
  return lsq_exec(db, any ? LSQ_SQL_LIVE_INDEX : "DROP INDEX IF EXISTS lease_jobs_live");
}

/* See lease.h: lease_pause, lease_resume, lease_limit. */
int lsq_q_set_queue(lease_db *db, const char *queue, size_t queue_len, int what, int paused,
                    const lease_queue_limits *l) {
  control_ctx x = {queue, queue_len, what, paused, l};
  return lsq_write_txn(db, control_body, &x);
}

/* One queue read by lsq_q_queues, its name an offset into db->buf. */
typedef struct queues_ctx {
  lease_queue_info *out;
  int max, n, failed;
  size_t used;
  size_t *names;
} queues_ctx;

/* Row callback of LSQ_SQL_Q_QUEUES. */
static int on_queue(lease_db *db, sqlite3_stmt *st, void *ctx) {
  queues_ctx *x = ctx;
  lease_queue_info *q;
  if (x->n == x->max) return LSQ_STOP;
  q = &x->out[x->n];
  memset(q, 0, sizeof *q);
  q->name_len = (size_t)sqlite3_column_bytes(st, 0);
  x->names[x->n] = keep_bytes(db, sqlite3_column_text(st, 0), q->name_len, &x->used, &x->failed);
  if (x->failed) return db->rc;
  q->paused = sqlite3_column_int64(st, 1) != 0;
  q->limits.concurrency = sqlite3_column_int64(st, 2);
  q->limits.rate = sqlite3_column_int64(st, 3);
  q->limits.per = sqlite3_column_double(st, 4);
  x->n++;
  return LEASE_OK;
}

/* See lease.h: lease_queues.  The names and settings first, then each
** queue's counts (lsq_count). */
int lsq_q_queues(lease_db *db, double now, lease_queue_info *out, int max, int *count) {
  queues_ctx x = {out, max, 0, 0, 0, NULL};
  int i, rc;
  if (!(x.names = malloc((size_t)max * sizeof *x.names)))
    return lease__fail(db, LEASE_NOMEM, "out of memory");
  rc = lsq_query(db, LSQ(db)->sql, LSQ_SQL_Q_QUEUES, on_queue, &x);
  for (i = 0; rc == LEASE_OK && i < x.n; i++)
    rc = lsq_count(db, now, kept(db, x.names[i]), out[i].name_len, &out[i].counts);
  for (i = 0; rc == LEASE_OK && i < x.n; i++) out[i].name = kept(db, x.names[i]);
  free(x.names);
  if (rc == LEASE_OK) *count = x.n;
  return rc;
}

/* ===================================================================== */
/* fail, retry, cancel, prune                                             */
/* ===================================================================== */

typedef struct fail_ctx {
  const lease__write *w;
  const lease_fail_opts *o;
  int status, reason;
  double run_at;
} fail_ctx;

/* Write body: fail's guarded UPDATE (complete's guard; the lease ends),
** then, when it stored, the error and the job's next state, each of which
** must change its one row (run_one). */
static int fail_body(lease_db *db, void *ctx) {
  fail_ctx *x = ctx;
  const lease__write *w = x->w;
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_FAIL), *att = lsq_stmt(db, LSQ_ST_Q_ATTEMPTS);
  sqlite3_stmt *add = lsq_stmt(db, LSQ_ST_Q_ERROR_ADD), *set = lsq_stmt(db, LSQ_ST_Q_AFTER_FAIL);
  lease__fail_facts f = {0, 0, w->now, x->o->no_attempt, x->o->has_run_at, x->o->run_at};
  lease__next next;
  int src, rc;
  x->reason = LEASE_GRANTED;
  if (!st || !att || !add || !set) return db->rc;
  lsq_bind_bytes(st, 1, w->id, w->id_len);
  lsq_bind_bytes(st, 2, w->owner, w->owner_len);
  sqlite3_bind_int64(st, 3, w->fence);
  sqlite3_bind_double(st, 4, w->now);
  if ((rc = run_once(db, st)) != LEASE_OK) return rc;
  if (sqlite3_changes(LSQ(db)->sql) == 0) {
    if ((rc = lsq_why_refused(db, w, &x->reason)) != LEASE_OK) return rc;
    return lease__event_write(db, LEASE_EV_FAIL, w, 0, x->reason);
  }
  if ((rc = lease__event_write(db, LEASE_EV_FAIL, w, 0, LEASE_GRANTED)) != LEASE_OK) return rc;
  lsq_bind_bytes(att, 1, w->id, w->id_len);
  src = sqlite3_step(att);
  if (src != SQLITE_ROW) {
    if (src != SQLITE_DONE) return lsq_step_failed(db, att, src);
    sqlite3_reset(att);
    return lease__fail(db, LEASE_ERROR, "internal error: the job has no queue row");
  }
  f.attempt = sqlite3_column_int64(att, 0);
  f.max_attempts = sqlite3_column_int64(att, 1);
  sqlite3_reset(att);
  lsq_bind_bytes(add, 1, w->id, w->id_len);
  sqlite3_bind_int64(add, 2, f.attempt);
  sqlite3_bind_double(add, 3, w->now);
  lsq_bind_bytes(add, 4, w->owner, w->owner_len);
  sqlite3_bind_int64(add, 5, w->fence);
  if (w->message) sqlite3_bind_blob(add, 6, w->message, (int)w->message_len, SQLITE_STATIC);
  else sqlite3_bind_null(add, 6);
  rc = run_one(db, add, "fail's error record of", w->id, w->id_len);
  sqlite3_clear_bindings(add);
  if (rc != LEASE_OK) return rc;
  lease__after_fail(&f, &next);
  x->status = next.status;
  x->run_at = next.run_at;
  lsq_bind_bytes(set, 1, w->id, w->id_len);
  sqlite3_bind_int64(set, 2, next.attempt);
  sqlite3_bind_int(set, 3, next.qstate);
  bind_time(set, 4, next.run_at);
  bind_time(set, 5, next.finished_at);
  if ((rc = run_one(db, set, "fail's queue state of", w->id, w->id_len)) != LEASE_OK ||
      next.qstate != LEASE__Q_DISCARDED)
    return rc;
  rc = lease__event_id(db, LEASE_EV_DISCARD, w->id, w->id_len, w->now, LEASE_GRANTED);
  if (rc != LEASE_OK) return rc;
  return lsq_q_cascade(db, w->id, w->id_len, LEASE__Q_DISCARDED, w->now);
}

/* See lease.h: lease_fail. */
int lsq_q_fail(lease_db *db, const lease__write *w, const lease_fail_opts *o, int *status,
                   double *run_at, int *reason) {
  fail_ctx x = {w, o, 0, LEASE_GRANTED, NAN};
  int rc = lsq_write_txn(db, fail_body, &x);
  if (rc != LEASE_OK) return rc;
  if (reason) *reason = x.reason;
  if (x.reason == LEASE_GRANTED) {
    *status = x.status;
    *run_at = x.run_at;
  }
  return LEASE_OK;
}

typedef struct admin_ctx {
  const char *id;
  size_t id_len;
  double now;
  int reason;
  int64_t deleted;
} admin_ctx;

/* Read Q_INFO for x->id: the job's facts found, done, live (until > now)
** and qstate. */
static int read_info(lease_db *db, admin_ctx *x, lease__facts *f) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_INFO);
  int src;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, x->id, x->id_len);
  sqlite3_bind_double(st, 2, x->now);
  src = sqlite3_step(st);
  f->found = src == SQLITE_ROW;
  if (src == SQLITE_ROW) {
    f->done = sqlite3_column_int(st, 0);
    f->live = sqlite3_column_int(st, 1);
    f->qstate = sqlite3_column_int(st, 2);
    src = SQLITE_DONE;
  }
  if (src != SQLITE_DONE) return lsq_step_failed(db, st, src);
  sqlite3_reset(st);
  return LEASE_OK;
}

/* Run one-id statement `which` (?1 id, and ?2 now when it takes one) in a
** body. */
static int run_id(lease_db *db, int which, admin_ctx *x) {
  sqlite3_stmt *st = lsq_stmt(db, which);
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, x->id, x->id_len);
  if (sqlite3_bind_parameter_count(st) >= 2) sqlite3_bind_double(st, 2, x->now);
  return run_once(db, st);
}

/* retry's key check (LSQ_SQL_Q_RETRY_HOLDER): x->reason LEASE_DUPLICATE
** and the holder recorded when another unfinished job of the queue holds
** the job's key. */
static int retry_holder(lease_db *db, admin_ctx *x) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_RETRY_HOLDER);
  int src, rc = LEASE_OK;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, x->id, x->id_len);
  src = sqlite3_step(st);
  if (src == SQLITE_ROW) {
    x->reason = LEASE_DUPLICATE;
    rc = lease__duplicate(db, (const char *)sqlite3_column_text(st, 0),
                          (size_t)sqlite3_column_bytes(st, 0));
  } else if (src != SQLITE_DONE) {
    return lsq_step_failed(db, st, src);
  }
  sqlite3_reset(st);
  return rc;
}

/* After retry's reset of x's queue row changed no row: LEASE_OK when the
** job has no queue row (LSQ_SQL_Q_ROW_THERE), else another
** client's trigger skipped the reset (the attempts would not start
** again): LEASE_MISMATCH recorded. */
static int reset_skipped(lease_db *db, const admin_ctx *x) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_ROW_THERE);
  int there, rc;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, x->id, x->id_len);
  if ((rc = lsq_found_row(db, st, &there)) != LEASE_OK) return rc;
  return there ? lease__skipped(db, "retry's reset of", x->id, x->id_len) : LEASE_OK;
}

/* Write body: retry (see lease.h).  The job's row must take the reopen
** (run_one), its queue row the reset (reset_skipped) and, with parents
** not completed, the wait (wait_written); and its facts read afterwards
** must be a job open again (not done, its queue row open or waiting):
** else another client's trigger skipped a write, on jobs or on
** lease_queue, and nothing is stored. */
static int retry_body(lease_db *db, void *ctx) {
  admin_ctx *x = ctx;
  sqlite3_stmt *reopen = lsq_stmt(db, LSQ_ST_Q_REOPEN);
  lease__facts f = {0};
  int rc;
  if (!reopen) return db->rc;
  if ((rc = read_info(db, x, &f)) != LEASE_OK) return rc;
  x->reason = lease__retry_reason(&f);
  if (x->reason == LEASE_GRANTED && (rc = retry_holder(db, x)) != LEASE_OK) return rc;
  if ((rc = lease__event_id(db, LEASE_EV_RETRY, x->id, x->id_len, x->now, x->reason)))
    return rc;
  if (x->reason != LEASE_GRANTED) return LEASE_OK;
  lsq_bind_bytes(reopen, 1, x->id, x->id_len);
  if ((rc = run_one(db, reopen, "retry's reopen of", x->id, x->id_len)) != LEASE_OK) return rc;
  if ((rc = run_id(db, LSQ_ST_Q_RESET, x)) != LEASE_OK) return rc;
  if (sqlite3_changes(LSQ(db)->sql) == 0 && (rc = reset_skipped(db, x)) != LEASE_OK) return rc;
  /* waits again for parents not completed */
  if ((rc = run_id(db, LSQ_ST_Q_DEP_WAIT, x)) != LEASE_OK) return rc;
  if (sqlite3_changes(LSQ(db)->sql) == 0 &&
      (rc = wait_written(db, "retry's wait of", x->id, x->id_len)) != LEASE_OK)
    return rc;
  if ((rc = read_info(db, x, &f)) != LEASE_OK) return rc;
  if (!f.done && (f.qstate == LEASE__Q_OPEN || f.qstate == LEASE__Q_WAITING)) return LEASE_OK;
  return lease__fail(db, LEASE_MISMATCH, "retry of %.*s left it %s (a trigger?): nothing stored",
                     (int)x->id_len, x->id, f.done ? "done" : "ended in its queue");
}

/* Write body: cancel (see lease.h). */
static int cancel_body(lease_db *db, void *ctx) {
  admin_ctx *x = ctx;
  sqlite3_stmt *end = lsq_stmt(db, LSQ_ST_Q_END);
  lease__facts f = {0};
  int rc;
  if (!end) return db->rc;
  if ((rc = read_info(db, x, &f)) != LEASE_OK) return rc;
  x->reason = lease__cancel_reason(&f);
  if ((rc = lease__event_id(db, LEASE_EV_CANCEL, x->id, x->id_len, x->now, x->reason)))
    return rc;
  if (x->reason != LEASE_GRANTED) return LEASE_OK;
  lsq_bind_bytes(end, 1, x->id, x->id_len);
  sqlite3_bind_int(end, 2, LEASE__Q_CANCELLED);
  sqlite3_bind_double(end, 3, x->now);
  if ((rc = run_one(db, end, "cancel of", x->id, x->id_len)) != LEASE_OK) return rc;
  return lsq_q_cascade(db, x->id, x->id_len, LEASE__Q_CANCELLED, x->now);
}

/* See lease.h: lease_retry. */
int lsq_q_retry(lease_db *db, const char *id, size_t id_len, double now, int *reason) {
  admin_ctx x = {id, id_len, now, LEASE_GRANTED, 0};
  int rc = lsq_write_txn(db, retry_body, &x);
  if (rc == LEASE_OK && reason) *reason = x.reason;
  return rc;
}

/* See lease.h: lease_cancel. */
int lsq_q_cancel(lease_db *db, const char *id, size_t id_len, double now, int *reason) {
  admin_ctx x = {id, id_len, now, LEASE_GRANTED, 0};
  int rc = lsq_write_txn(db, cancel_body, &x);
  if (rc == LEASE_OK && reason) *reason = x.reason;
  return rc;
}

typedef struct prune_ctx {
  double before;
  const char *queue;
  size_t queue_len;
  int state;
  int64_t deleted;
} prune_ctx;

/* Delete the jobs row of rowid `row` by LSQ_SQL_Q_PRUNE_ONE; *gone:
** whether it was there. */
static int prune_one(lease_db *db, sqlite3_int64 row, int *gone) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_PRUNE_ONE);
  int rc;
  if (!st) return db->rc;
  sqlite3_bind_int64(st, 1, row);
  if ((rc = run_once(db, st)) != LEASE_OK) return rc;
  *gone = sqlite3_changes(LSQ(db)->sql) > 0;
  return LEASE_OK;
}

/* Raise the fence floor (LSQ_SQL_Q_FLOOR_RAISE) to `fence`, the highest
** fence of the jobs prune deleted: the upsert writes its one row, kept or
** raised, unless another client's trigger skipped it (run_one). */
static int raise_floor(lease_db *db, sqlite3_int64 fence) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_FLOOR_RAISE);
  if (!st) return db->rc;
  sqlite3_bind_int64(st, 1, fence);
  return run_one(db, st, "prune's raise of the fence floor", NULL, 0);
}

/* Write body: prune.  What LSQ_SQL_Q_PRUNE lists is kept first (each
** entry: the id's length, the rowid, the fence, the id's bytes, which
** the ledger records), then each job is deleted by its rowid, and the
** fence floor raised to the highest fence of those deleted. */
static int prune_body(lease_db *db, void *ctx) {
  prune_ctx *x = ctx;
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_PRUNE);
  size_t used = 0, at, n;
  sqlite3_int64 row, fence, top = 0;
  const size_t head = sizeof n + sizeof row + sizeof fence;
  int rc, src, gone = 0;
  if (!st) return db->rc;
  sqlite3_bind_double(st, 1, x->before);
  if (x->queue) lsq_bind_bytes(st, 2, x->queue, x->queue_len);
  else sqlite3_bind_null(st, 2);
  sqlite3_bind_int(st, 3, x->state);
  sqlite3_bind_double(st, 4, lease__prune_held(db, x->before));
  while ((src = sqlite3_step(st)) == SQLITE_ROW) {
    const unsigned char *id = sqlite3_column_text(st, 0);
    n = id ? (size_t)sqlite3_column_bytes(st, 0) : 0;
    row = sqlite3_column_int64(st, 1);
    fence = sqlite3_column_int64(st, 2);
    if (lease__reserve(db, used + head + n) != LEASE_OK) {
      sqlite3_reset(st);
      return db->rc;
    }
    memcpy(db->buf + used, &n, sizeof n);
    memcpy(db->buf + used + sizeof n, &row, sizeof row);
    memcpy(db->buf + used + sizeof n + sizeof row, &fence, sizeof fence);
    if (n) memcpy(db->buf + used + head, id, n);
    used += head + n;
  }
  if (src != SQLITE_DONE) return lsq_step_failed(db, st, src);
  sqlite3_reset(st);
  for (at = 0; at < used; at += head + n) {
    memcpy(&n, db->buf + at, sizeof n);
    memcpy(&row, db->buf + at + sizeof n, sizeof row);
    memcpy(&fence, db->buf + at + sizeof n + sizeof row, sizeof fence);
    if ((rc = prune_one(db, row, &gone)) != LEASE_OK) return rc;
    if (!gone) continue;
    x->deleted++;
    if (fence > top) top = fence;
    if ((rc = lease__event_id(db, LEASE_EV_PRUNE, db->buf + at + head, n, NAN,
                              LEASE_GRANTED)) != LEASE_OK)
      return rc;
  }
  return top > 0 ? raise_floor(db, top) : LEASE_OK;
}

/* See lease.h: lease_prune.  status: LEASE_STATUS_* of an ended job, or 0. */
int lsq_q_prune(lease_db *db, double before, const char *queue, size_t queue_len, int status,
                    int64_t *deleted) {
  prune_ctx x = {before, queue, queue_len, 0, 0};
  int rc;
  x.state = lease__prune_state(status);
  if ((rc = lsq_write_txn(db, prune_body, &x)) == LEASE_OK) *deleted = x.deleted;
  return rc;
}
