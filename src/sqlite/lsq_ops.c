/*
** lsq_ops.c: the operations of the SQLite backend, and its table of
** functions (lease__sqlite).  Arguments arrive checked and resolved by the
** core (src/core/lease.c).
**
** Every write is one guarded UPDATE whose WHERE clause carries the whole
** check of the contract (owner, fence, done, until), run inside a
** BEGIN IMMEDIATE transaction.  When the UPDATE changes nothing, one SELECT
** in the same transaction says why (why_refused), so the reason reported
** is the state that refused the write, not a later one.
*/
#include "lsq.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* End a read outside any transaction: reset the statement and, when the
** last step was not SQLITE_DONE, record that step's error (before the
** reset, which could change the connection's message). */
static int finish_read(lease_db *db, sqlite3_stmt *st, int src) {
  if (src != SQLITE_DONE) lsq_fail(db, LSQ(db)->sql, src);
  sqlite3_reset(st);
  return src == SQLITE_DONE ? LEASE_OK : db->rc;
}

/* ===================================================================== */
/* Opening, schema, settings                                              */
/* ===================================================================== */

/* See lease.h (contract step 1). */
static int sq_init(lease_db *db) {
  int rc = lsq_exec(db, LSQ_SQL_CREATE_JOBS);
  return rc;
}

/* Row of a one-column PRAGMA: copy its text into ctx (16 bytes). */
static int on_mode(lease_db *db, sqlite3_stmt *st, void *ctx) {
  const char *m = (const char *)sqlite3_column_text(st, 0);
  (void)db;
  snprintf(ctx, sizeof ((lease_settings *)0)->journal_mode, "%s", m ? m : "");
  return LSQ_STOP;
}

/* Row of PRAGMA synchronous: its level into *(int *)ctx. */
static int on_level(lease_db *db, sqlite3_stmt *st, void *ctx) {
  (void)db;
  *(int *)ctx = sqlite3_column_int(st, 0);
  return LSQ_STOP;
}

/* See lease.h: lease_read_settings. */
static int sq_settings(lease_db *db, lease_settings *out) {
  int rc = lsq_query(db, LSQ(db)->sql, "PRAGMA journal_mode", on_mode, out->journal_mode);
  if (rc == LEASE_OK) rc = lsq_query(db, LSQ(db)->sql, "PRAGMA synchronous", on_level,
                                     &out->synchronous);
  return rc;
}

/* See lease_int.h: an in-memory or temporary database has no file name. */
static int sq_is_private(const lease_db *db) {
  const char *f = sqlite3_db_filename(LSQ(db)->sql, "main");
  return f == NULL || f[0] == '\0';
}

/* See lease_int.h: SQLITE_LIMIT_LENGTH of this connection. */
static size_t sq_max_length(const lease_db *db) {
  return (size_t)sqlite3_limit(LSQ(db)->sql, SQLITE_LIMIT_LENGTH, -1);
}

/* ===================================================================== */
/* Reads                                                                  */
/* ===================================================================== */

/*
** Copy the row at the statement's columns (first column `c0`: id, owner,
** until, fence, result, done, blocked code, then the queue's columns of
** LSQ_SQL_FULL_ROW: payload, queue, priority, run_at, attempt,
** max_attempts, finished_at, status, seq, result size, key) into *row, its
** strings appended to the handle's buffer at *used.  Pointers are fixed
** up by lsq_fix_row once the buffer stops moving.  Returns LEASE_OK or
** LEASE_NOMEM.
*/
int lsq_copy_row(lease_db *db, sqlite3_stmt *st, int c0, lease_row *row, size_t *used) {
  const int cols[6] = {c0, c0 + 1, c0 + 4, c0 + 7, c0 + 8, c0 + 17};
  size_t *lens[6] = {&row->id_len, &row->owner_len, &row->result_len, &row->payload_len,
                     &row->queue_len, &row->key_len};
  const char **ptrs[6] = {&row->id, &row->owner, &row->result, &row->payload, &row->queue,
                          &row->key};
  int i;
  for (i = 0; i < 6; i++) {
    const void *p = sqlite3_column_type(st, cols[i]) == SQLITE_NULL
                        ? NULL : (i == 3 ? sqlite3_column_blob(st, cols[i])
                                         : (const void *)sqlite3_column_text(st, cols[i]));
    size_t n = p ? (size_t)sqlite3_column_bytes(st, cols[i]) : 0;
    if (i == 3 && !p && sqlite3_column_type(st, cols[i]) != SQLITE_NULL) p = "";
    if (!p) {
      *ptrs[i] = NULL;
      *lens[i] = 0;
      continue;
    }
    if (lease__reserve(db, *used + n + 1) != LEASE_OK) return db->rc;
    if (n) memcpy(db->buf + *used, p, n);
    db->buf[*used + n] = '\0';
    /* an offset for now: the buffer may still move */
    *ptrs[i] = (const char *)(uintptr_t)(*used + 1);
    *lens[i] = n;
    *used += n + 1;
  }
  /* an until that is not a number reads as NaN, not as a made-up number */
  i = sqlite3_column_type(st, c0 + 2);
  row->until = (i == SQLITE_INTEGER || i == SQLITE_FLOAT) ? sqlite3_column_double(st, c0 + 2) : NAN;
  row->fence = sqlite3_column_int64(st, c0 + 3);
  row->done = sqlite3_column_int64(st, c0 + 5) != 0;
  row->blocked = lease__blocked_msg(sqlite3_column_int(st, c0 + 6));
  row->priority = sqlite3_column_int64(st, c0 + 9);
  row->run_at = sqlite3_column_type(st, c0 + 10) == SQLITE_NULL ? NAN
                : sqlite3_column_double(st, c0 + 10);
  row->attempt = sqlite3_column_int64(st, c0 + 11);
  row->max_attempts = sqlite3_column_int64(st, c0 + 12);
  row->finished_at = sqlite3_column_type(st, c0 + 13) == SQLITE_NULL ? NAN
                     : sqlite3_column_double(st, c0 + 13);
  row->status = sqlite3_column_int(st, c0 + 14);
  row->seq = sqlite3_column_int64(st, c0 + 15);
  row->result_size = sqlite3_column_int64(st, c0 + 16);
  row->timeout = 0;   /* not among the columns: lease_state reads it apart */
  return LEASE_OK;
}

/* Turn the offsets lsq_copy_row stored (plus one, so NULL stays NULL)
** into pointers into the handle's buffer. */
void lsq_fix_row(lease_db *db, lease_row *row) {
  if (row->id) row->id = db->buf + ((uintptr_t)row->id - 1);
  if (row->owner) row->owner = db->buf + ((uintptr_t)row->owner - 1);
  if (row->result) row->result = db->buf + ((uintptr_t)row->result - 1);
  if (row->payload) row->payload = db->buf + ((uintptr_t)row->payload - 1);
  if (row->queue) row->queue = db->buf + ((uintptr_t)row->queue - 1);
  if (row->key) row->key = db->buf + ((uintptr_t)row->key - 1);
}

/* See lease.h: lease_count (queue NULL: every queue). */
int lsq_count(lease_db *db, double now, const char *queue, size_t queue_len, lease_counts *out) {
  int64_t *by_status[8] = {&out->available, &out->scheduled, &out->running, &out->retryable,
                           &out->completed, &out->discarded, &out->cancelled, &out->waiting};
  sqlite3_stmt *st;
  int src, i;
  if (!(st = lsq_stmt(db, LSQ_ST_TALLY))) return db->rc;
  sqlite3_bind_double(st, 1, now);
  if (queue) lsq_bind_bytes(st, 2, queue, queue_len);
  else sqlite3_bind_null(st, 2);
  src = lsq_step(db, LSQ(db)->sql, st);
  if (src == SQLITE_ROW) {
    out->total = sqlite3_column_int64(st, 0);
    out->done = (int64_t)sqlite3_column_double(st, 1);
    out->ready = (int64_t)sqlite3_column_double(st, 2);
    out->held = (int64_t)sqlite3_column_double(st, 3);
    out->blocked = (int64_t)sqlite3_column_double(st, 4);
    for (i = 0; i < 8; i++) *by_status[i] = (int64_t)sqlite3_column_double(st, 5 + i);
    src = SQLITE_DONE;
  }
  return finish_read(db, st, src);
}

/* ===================================================================== */
/* Writes                                                                 */
/* ===================================================================== */

/* The guarded UPDATE of each write. */
static const int write_stmt[] = {
  [LEASE__CLAIM] = LSQ_ST_CLAIM,
  [LEASE__RENEW] = LSQ_ST_RENEW,
  [LEASE__COMPLETE] = LSQ_ST_COMPLETE,
  [LEASE__RELEASE] = LSQ_ST_RELEASE,
};
_Static_assert(sizeof write_stmt / sizeof write_stmt[0] == LEASE__RELEASE + 1,
               "one statement per guarded write");

/* The ledger's op of each guarded write. */
static const int write_event[] = {
  [LEASE__CLAIM] = LEASE_EV_CLAIM,
  [LEASE__RENEW] = LEASE_EV_RENEW,
  [LEASE__COMPLETE] = LEASE_EV_COMPLETE,
  [LEASE__RELEASE] = LEASE_EV_RELEASE,
};

/* Bind w to its guarded UPDATE (parameters as lsq_sql.h numbers them). */
static void bind_write(sqlite3_stmt *st, const lease__write *w) {
  lsq_bind_bytes(st, 1, w->id, w->id_len);
  lsq_bind_bytes(st, 2, w->owner, w->owner_len);
  switch (w->op) {
    case LEASE__CLAIM:
      sqlite3_bind_double(st, 3, w->now);
      sqlite3_bind_double(st, 4, w->until);
      break;
    case LEASE__RENEW:
      sqlite3_bind_int64(st, 3, w->fence);
      sqlite3_bind_double(st, 4, w->now);
      sqlite3_bind_double(st, 5, w->until);
      break;
    case LEASE__COMPLETE:
      sqlite3_bind_int64(st, 3, w->fence);
      sqlite3_bind_double(st, 4, w->now);
      if (w->result) lsq_bind_bytes(st, 5, w->result, w->result_len);
      else sqlite3_bind_null(st, 5);
      break;
    case LEASE__RELEASE:
      sqlite3_bind_int64(st, 3, w->fence);
      break;
  }
}

/*
** Why the guarded write w changed nothing, read in its transaction: the
** job's facts from LSQ_SQL_WHY's row, judged by the core's rules
** (lease__refusal, src/core/lease_rules.c).  Sets *reason, or records why
** no reason fits (a blocked job; every check passing) and returns that
** failure.  The transaction stays open; the caller rolls back on failure.
*/
int lsq_why_refused(lease_db *db, const lease__write *w, int *reason) {
  sqlite3_stmt *why = lsq_stmt(db, LSQ_ST_WHY);
  lease__facts f = {0};
  int src, rc = LEASE_OK;
  if (!why) return db->rc;
  lsq_bind_bytes(why, 1, w->id, w->id_len);
  lsq_bind_bytes(why, 2, w->owner, w->owner_len);
  sqlite3_bind_int64(why, 3, w->fence);
  if (w->op == LEASE__RELEASE) sqlite3_bind_null(why, 4);
  else sqlite3_bind_double(why, 4, w->now);
  src = sqlite3_step(why);
  if (src == SQLITE_ROW) {
    f.found = 1;
    f.done = sqlite3_column_int(why, 0);
    f.other_owner = sqlite3_column_int(why, 1);
    f.other_fence = sqlite3_column_int(why, 2);
    f.expired = sqlite3_column_int(why, 3);
    f.blocked = sqlite3_column_int(why, 4);
    f.live = sqlite3_column_int(why, 5);
    f.qstate = sqlite3_column_int(why, 6);
    src = SQLITE_DONE;
  }
  if (src == SQLITE_DONE) rc = lease__refusal(db, w, &f, reason);
  else rc = lsq_fail(db, LSQ(db)->sql, src);
  sqlite3_reset(why);
  return rc;
}

/*
** A completion's queue row, inside complete's transaction, before its
** guarded UPDATE of jobs: LSQ_SQL_Q_COMPLETE with w's id, owner, fence and
** now.  *changed: 1 when it made the row completed (the guard holds).
*/
static int complete_queue_row(lease_db *db, const lease__write *w, int *changed) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_COMPLETE);
  int src;
  *changed = 0;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, w->id, w->id_len);
  lsq_bind_bytes(st, 2, w->owner, w->owner_len);
  sqlite3_bind_int64(st, 3, w->fence);
  sqlite3_bind_double(st, 4, w->now);
  src = sqlite3_step(st);
  if (src != SQLITE_DONE) return lsq_step_failed(db, st, src);
  *changed = sqlite3_changes(LSQ(db)->sql) > 0;
  sqlite3_reset(st);
  return LEASE_OK;
}

/*
** After a complete of w's job stored whose queue row complete_queue_row
** did not write: LEASE_OK when the job has no queue row; else another
** client's trigger skipped that write (the job would stay open in its
** queue, or be completed by lease_jobs_done at another time):
** LEASE_MISMATCH recorded.
*/
static int queue_row_left(lease_db *db, const lease__write *w) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_ROW_THERE);
  int there, rc;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, w->id, w->id_len);
  if ((rc = lsq_found_row(db, st, &there)) != LEASE_OK) return rc;
  if (!there) return LEASE_OK;
  return lease__skipped(db, "complete's queue row of", w->id, w->id_len);
}

/*
** One guarded write inside an open transaction, the shared body of every
** write (contract steps 4-7): run w's guarded UPDATE, whose WHERE clause
** checks the contract at the moment it stores; when it changes nothing,
** why_refused in the same transaction; then the outcome's event in the
** ledger (lease__event_write).  *fence gets a claim's new fence.  A
** release that stored gives its attempt back (lsq_q_give_back).  A
** complete writes the job's queue row first (complete_queue_row) under
** the same guard; when its UPDATE of jobs then stores nothing, something
** in between (a trigger another client defined) changed the job: that is
** LEASE_MISMATCH, and the caller undoes both (lsq_write_txn rolls back,
** lsq_tx_write runs a complete in a savepoint); when the UPDATE of jobs
** stored but the queue row was not written, queue_row_left checks it.
** On a failure the error is recorded (lsq_write_txn rolls back).
*/
int lsq_guarded_step(lease_db *db, const lease__write *w, int64_t *fence, int *reason) {
  sqlite3_stmt *st = lsq_stmt(db, write_stmt[w->op]);
  int src, changed, queued = 0;
  *reason = LEASE_GRANTED;
  if (!st) return db->rc;
  if (w->op == LEASE__CLAIM) {
    /* A lease that expired unreported counts against the job first. */
    int rc = lsq_q_expired(db, w);
    if (rc != LEASE_OK) return rc;
  }
  if (w->op == LEASE__COMPLETE && (src = complete_queue_row(db, w, &queued)) != LEASE_OK)
    return src;
  bind_write(st, w);
  if (w->op == LEASE__CLAIM) {
    changed = 0;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
      *fence = sqlite3_column_int64(st, 0);
      changed = 1;
    }
  } else {
    src = sqlite3_step(st);
    changed = src == SQLITE_DONE && sqlite3_changes(LSQ(db)->sql) > 0;
  }
  if (src != SQLITE_DONE) return lsq_step_failed(db, st, src);
  sqlite3_reset(st);
  if (w->op == LEASE__COMPLETE) sqlite3_clear_bindings(st);   /* drop the pointer to result */
  if (queued && !changed)
    return lease__fail(db, LEASE_MISMATCH, "job %.*s changed between its queue row and its"
                       " jobs row within complete (a trigger?): nothing stored",
                       (int)w->id_len, w->id);
  if (changed && w->op == LEASE__COMPLETE && !queued && (src = queue_row_left(db, w)) != LEASE_OK)
    return src;
  if (changed && w->op == LEASE__COMPLETE && (src = lsq_q_release(db, w)) != LEASE_OK) return src;
  if (changed && w->op == LEASE__RELEASE && (src = lsq_q_give_back(db, w)) != LEASE_OK) return src;
  if (!changed && (src = lsq_why_refused(db, w, reason)) != LEASE_OK) return src;
  return lease__event_write(db, write_event[w->op], w, fence && changed ? *fence : 0, *reason);
}

/* The arguments and outcome of a write body: one guarded write, or a
** batch of completions (items, n) by w's owner at w's time. */
typedef struct write_ctx {
  const lease__write *w;
  const lease_result *items;
  int n, stored;
  int64_t fence;
  int reason;
  int *reasons;
} write_ctx;

/* Write body: the guarded write x->w (contract steps 4-7). */
static int write_body(lease_db *db, void *ctx) {
  write_ctx *x = ctx;
  return lsq_guarded_step(db, x->w, &x->fence, &x->reason);
}

/* See lease_int.h: claim, renew, complete or release in its own
** BEGIN IMMEDIATE transaction. */
static int sq_write(lease_db *db, const lease__write *w, int64_t *fence, int *reason) {
  write_ctx x = { w, NULL, 0, 0, 0, LEASE_GRANTED, NULL };
  int rc;
  if (!lsq_stmt(db, write_stmt[w->op]) || !lsq_stmt(db, LSQ_ST_WHY)) return db->rc;
  if ((rc = lsq_write_txn(db, write_body, &x)) != LEASE_OK) return rc;
  if (fence) *fence = x.reason == LEASE_GRANTED ? x.fence : 0;
  if (reason) *reason = x.reason;
  return LEASE_OK;
}

/* See lsq.h. */
int lsq_complete_each(lease_db *db, const lease__write *w, const lease_result *items, int n,
                      int *reasons, int *stored) {
  lease__write one = *w;
  int rc = LEASE_OK, i, r, done = 0;
  if (n > 1 && (rc = lsq_q_deps_none(db, &LSQ(db)->no_deps)) != LEASE_OK) return rc;
  for (i = 0; i < n; i++) {
    one.id = items[i].id;
    one.id_len = items[i].id_len == LEASE_NTS ? strlen(items[i].id) : items[i].id_len;
    one.fence = items[i].fence;
    one.result = items[i].result;
    one.result_len = items[i].result && items[i].result_len == LEASE_NTS
                         ? strlen(items[i].result) : items[i].result_len;
    rc = lsq_guarded_step(db, &one, NULL, &r);
    if (rc != LEASE_OK) break;   /* rolled back: none is stored */
    if (reasons) reasons[i] = r;
    if (r == LEASE_GRANTED) done++;
  }
  LSQ(db)->no_deps = 0;
  if (rc == LEASE_OK) *stored = done;
  return rc;
}

/* Write body: complete each of x->items (lsq_complete_each). */
static int complete_many_body(lease_db *db, void *ctx) {
  write_ctx *x = ctx;
  return lsq_complete_each(db, x->w, x->items, x->n, x->reasons, &x->stored);
}

/* See lease.h (contract step 6 for each job, one transaction). */
static int sq_complete_many(lease_db *db, const lease__write *w, const lease_result *items,
                            int n, int *reasons, int *stored) {
  write_ctx x = { w, items, n, 0, 0, LEASE_GRANTED, reasons };
  int rc;
  if (!lsq_stmt(db, LSQ_ST_COMPLETE) || !lsq_stmt(db, LSQ_ST_WHY)) return db->rc;
  if ((rc = lsq_write_txn(db, complete_many_body, &x)) != LEASE_OK) return rc;
  if (stored) *stored = x.stored;
  return LEASE_OK;
}

/* See lease_int.h: SQLite has no clock of its own; the local wall clock
** (CLOCK_REALTIME), as lease.now() reads it. */
static int sq_server_now(lease_db *db, double *out) {
  struct timespec ts;
  (void)db;
  clock_gettime(CLOCK_REALTIME, &ts);
  *out = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
  return LEASE_OK;
}

/* ===================================================================== */
/* The table of functions                                                 */
/* ===================================================================== */

/* See lease_int.h. */
const lease__backend lease__sqlite = {
  .name = "SQLite",
  .statement = lsq_statement,
  .open = lsq_open,
  .close = lsq_close,
  .init = sq_init,
  .enqueue = lsq_q_enqueue,
  .after = lsq_q_after,
  .state = lsq_q_state,
  .write = sq_write,
  .complete_many = sq_complete_many,
  .claim_next = lsq_q_claim_next,
  .list = lsq_q_list,
  .count = lsq_count,
  .settings = sq_settings,
  .is_private = sq_is_private,
  .max_length = sq_max_length,
  .errors = lsq_q_errors,
  .complete_claim_next = lsq_q_complete_claim_next,
  .complete_many_claim_next = lsq_q_complete_many_claim_next,
  .fail = lsq_q_fail,
  .retry = lsq_q_retry,
  .cancel = lsq_q_cancel,
  .prune = lsq_q_prune,
  .set_queue = lsq_q_set_queue,
  .queues = lsq_q_queues,
  .with_lease = lsq_with_lease,
  .tx_run = lsq_tx_run,
  .tx_write = lsq_tx_write,
  .fence_gate = lsq_fence_gate,
  .file_id = lsq_file_id,
  .server_now = sq_server_now,
  .schedule = lsq_s_schedule,
  .unschedule = lsq_s_unschedule,
  .schedules = lsq_s_schedules,
  .tick = lsq_s_tick,
  .wake = lsq_wake,
  .wait_mark = lsq_wait_mark,
  .due = lsq_due,
  .wait_signal = lsq_wait_signal,
  .event = lsq_event,
  .event_prune = lsq_event_prune,
  .events = lsq_events,
};
